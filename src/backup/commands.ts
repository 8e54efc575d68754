import { configCommand } from '../cli.js';
import { createBackup, restoreBackup } from './service.js';

export const backupCommand = configCommand({
  meta: {
    name: 'backup',
    description: 'Back up the database and the attachment files into a new directory (the server may keep running); never the master key',
  },
  args: { out: { type: 'string', required: true, description: 'a new or empty directory for the backup' } },
  async run({ config, args, io }) {
    const started = Date.now();
    const m = await createBackup(config, args.out, (line) => io.say(line));
    io.say(
      `backup done in ${((Date.now() - started) / 1000).toFixed(1)} s: ${m.database.dialect} database at schema ${m.database.schema_migration}` +
        (m.files.included ? `, ${m.files.count} file(s)` : '; attachments are in S3 (not included)') +
        `. The master key is not included${m.master_key.fingerprint ? ` (fingerprint ${m.master_key.fingerprint})` : ''}: keep it apart.`,
    );
  },
});

export const restoreCommand = configCommand({
  meta: { name: 'restore', description: 'Replace the database and the attachment files with a backup; the server must be stopped' },
  args: { from: { type: 'string', required: true, description: 'the backup directory (with manifest.json)' } },
  async run({ config, args, io }) {
    const { manifest: m, sameMasterKey } = await restoreBackup(config, args.from, (line) => io.say(line));
    io.say(
      `restored the backup of ${m.created_at} (svc ${m.svc_version}, schema ${m.database.schema_migration}). ` +
        `Start the server with the same master key it was made with${m.master_key.fingerprint ? ` (fingerprint ${m.master_key.fingerprint})` : ''}; ` +
        'an older schema is migrated forward when the server starts.',
    );
    if (sameMasterKey === false)
      io.say('warning: the master key configured here is NOT the one this backup was made with; stored secrets will not open until you use that key');
  },
});

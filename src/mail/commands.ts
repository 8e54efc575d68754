import { dbCommand, UsageError } from '../cli.js';
import { tooLarge } from '../platform/errors.js';
import type { MailHandlers } from './handlers.js';
import { checkRawSize, ingestEmail } from './ingest.js';

/** Standard input, read up to the limit (a longer message is refused without reading it all). */
async function readStdin(maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(`the message is larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** `handlers`: the ingress handler table (src/server/mail-handlers.ts). */
export const ingestEmailCommand = (handlers: MailHandlers) =>
  dbCommand({
    meta: { name: 'ingest-email', description: 'Deliver a raw message from standard input; prints the stored message id' },
    args: {
      to: { type: 'string', required: true, description: 'the recipient address (a channel or forwarding address)' },
      from: { type: 'string', description: 'the envelope sender' },
    },
    async run({ app, args, io }) {
      if (process.stdin.isTTY) throw new UsageError('pipe the message into standard input');
      const raw = await readStdin(app.config.ingressMaxBytes);
      checkRawSize(app, raw.length);
      const results = await ingestEmail(app, { raw, recipients: [args.to], envelopeFrom: args.from ?? null, via: 'cli', handlers });
      for (const r of results) {
        io.say(
          r.duplicate
            ? `already stored in inbox ${r.inbox_id} (conversation ${r.conversation_id})`
            : `stored in inbox ${r.inbox_id}, conversation ${r.conversation_id}${r.new_conversation ? ' (new)' : ''}`,
        );
        io.out(r.message_id);
      }
    },
  });

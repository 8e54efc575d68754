// Loaded into a `svc serve` child with `--import` by crash tests: from the HOLD_FLUSH_AT-th flush of
// a file whose path contains HOLD_FLUSH_MATCH on, flushes never finish, and one stderr line says so.
// The test then kills the server with -9 while that work waits for its flush (no answer sent yet).
import fs from 'node:fs';

const holdAt = Number(process.env.HOLD_FLUSH_AT ?? 0);
const match = process.env.HOLD_FLUSH_MATCH ?? '';
let seen = 0;
const open = fs.promises.open;

fs.promises.open = async function openWithHeldFlush(...args: Parameters<typeof open>) {
  const handle = await open.apply(fs.promises, args);
  if (holdAt && match && String(args[0]).includes(match) && ++seen >= holdAt) {
    if (seen === holdAt) process.stderr.write(`${JSON.stringify({ msg: 'test: flush held', file: String(args[0]) })}\n`);
    const held = () => new Promise<void>(() => {});
    Object.assign(handle, { datasync: held, sync: held });
  }
  return handle;
} as typeof open;

// The same for the callback API (nodeDurableFs creates files and flushes directories through it):
// descriptors opened on a matching path from the HOLD_FLUSH_AT-th on never finish their flushes.
const heldFds = new Set<number>();
const openCb = fs.open;
fs.open = function openCbWithHeldFlush(file: fs.PathLike, ...rest: unknown[]) {
  const callback = rest.pop() as (error: NodeJS.ErrnoException | null, fd: number) => void;
  return (openCb as (...a: unknown[]) => void)(file, ...rest, (error: NodeJS.ErrnoException | null, fd: number) => {
    if (!error && holdAt && match && String(file).includes(match) && ++seen >= holdAt) {
      if (seen === holdAt) process.stderr.write(`${JSON.stringify({ msg: 'test: flush held', file: String(file) })}\n`);
      heldFds.add(fd);
    }
    callback(error, fd);
  });
} as typeof fs.open;
for (const name of ['fdatasync', 'fsync'] as const) {
  const original = fs[name];
  (fs as Record<string, unknown>)[name] = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) =>
    heldFds.has(fd) ? undefined : original(fd, callback);
}

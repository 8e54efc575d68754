// The parts of an uploaded export file read as one file, without assembling them into a copy: an
// export of N GB is read where it lies (no second N GB on disk, no N GB written before the read
// can start). Streams read one part at a time through one small buffer.
import fs from 'node:fs';
import { Readable } from 'node:stream';

const CHUNK_BYTES = 256 * 1024;

export interface PartFile {
  path: string;
  size: number;
}

export class PartsFile {
  readonly size: number;
  /** Where each part starts in the whole file. */
  private readonly starts: number[];

  constructor(private readonly parts: readonly PartFile[]) {
    let at = 0;
    this.starts = parts.map((p) => {
      const start = at;
      at += p.size;
      return start;
    });
    this.size = at;
  }

  /** Bytes [start, end) of the whole file, in chunks of at most CHUNK_BYTES. */
  async *chunks(start = 0, end = this.size): AsyncGenerator<Buffer> {
    end = Math.min(end, this.size);
    let position = Math.max(0, start);
    let buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, Math.max(1, end - position)));
    while (position < end) {
      const i = this.partAt(position);
      const part = this.parts[i];
      const fh = await fs.promises.open(part.path, 'r');
      try {
        let offset = position - this.starts[i];
        const partEnd = Math.min(part.size, end - this.starts[i]);
        while (offset < partEnd) {
          const want = Math.min(buffer.length, partEnd - offset);
          const { bytesRead } = await fh.read(buffer, 0, want, offset);
          if (bytesRead === 0) throw new Error(`part ${part.path} is shorter than ${part.size} bytes`);
          offset += bytesRead;
          position += bytesRead;
          // The consumer may keep the chunk (a PullStream does): it gets its own buffer.
          yield buffer.subarray(0, bytesRead);
          buffer = Buffer.allocUnsafe(buffer.length);
        }
      } finally {
        await fh.close();
      }
    }
  }

  /** Reads `length` bytes at `position` (fewer at the end of the file). */
  async read(position: number, length: number): Promise<Buffer> {
    const out: Buffer[] = [];
    for await (const chunk of this.chunks(position, position + length)) out.push(chunk);
    return Buffer.concat(out);
  }

  /** A byte stream of [start, start + length] (inclusive end, as fs.createReadStream's `end`). */
  stream(start: number, length?: number): Readable {
    const end = length === undefined ? this.size : start + length + 1;
    return Readable.from(this.chunks(start, end), { objectMode: false, highWaterMark: CHUNK_BYTES });
  }

  private partAt(position: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= position) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

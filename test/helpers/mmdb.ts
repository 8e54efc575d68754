// Writes small real MMDB files (MaxMind DB format 2.0, IPv4 tree, 24-bit records) for location
// database tests: the same binary layout GeoLite2 and DB-IP files have, read by the real reader.
type Value = string | number | boolean | Value[] | { [key: string]: Value };

function control(type: number, size: number): Buffer {
  const head: number[] = [];
  let extra: number[] = [];
  let sizeBits = size;
  if (size >= 65821) {
    sizeBits = 31;
    const n = size - 65821;
    extra = [(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  } else if (size >= 285) {
    sizeBits = 30;
    const n = size - 285;
    extra = [(n >> 8) & 0xff, n & 0xff];
  } else if (size >= 29) {
    sizeBits = 29;
    extra = [size - 29];
  }
  if (type <= 7) head.push((type << 5) | sizeBits);
  else head.push(sizeBits, type - 7);
  return Buffer.from([...head, ...extra]);
}

function uint(n: number | bigint, bytes: number): Buffer {
  const out: number[] = [];
  let v = BigInt(n);
  while (v > 0n) {
    out.unshift(Number(v & 0xffn));
    v >>= 8n;
  }
  return Buffer.from(out.slice(-bytes));
}

export function encode(value: Value, asUint?: 16 | 32 | 64): Buffer {
  if (typeof value === 'string') {
    const b = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, b.length), b]);
  }
  if (typeof value === 'number') {
    const type = asUint === 16 ? 5 : asUint === 64 ? 9 : 6;
    const b = uint(value, type === 5 ? 2 : type === 6 ? 4 : 8);
    return Buffer.concat([control(type, b.length), b]);
  }
  if (typeof value === 'boolean') return control(14, value ? 1 : 0);
  if (Array.isArray(value)) return Buffer.concat([control(11, value.length), ...value.map((v) => encode(v))]);
  const entries = Object.entries(value);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, v]) => [encode(k), encode(v)])]);
}

export interface MmdbEntry {
  /** An IPv4 network, a.b.c.d/len. */
  network: string;
  record: { [key: string]: Value };
}

/** A whole database file: search tree, data section, metadata. */
export function buildMmdb(opts: { databaseType: string; entries: MmdbEntry[]; buildEpoch?: number }): Buffer {
  type Node = { children: [Node | number | null, Node | number | null]; index?: number };
  const root: Node = { children: [null, null] };
  const data: Buffer[] = [];
  let dataLength = 0;
  for (const entry of opts.entries) {
    const [addr, len] = entry.network.split('/');
    const bits = addr.split('.').reduce((acc, o) => (acc << 8n) | BigInt(Number(o)), 0n);
    const encoded = encode(entry.record);
    const offset = dataLength;
    data.push(encoded);
    dataLength += encoded.length;
    let node = root;
    const prefix = Number(len);
    for (let i = 0; i < prefix; i++) {
      const bit = Number((bits >> BigInt(31 - i)) & 1n);
      if (i === prefix - 1) {
        node.children[bit] = offset;
        break;
      }
      let next = node.children[bit];
      if (typeof next !== 'object' || next === null) {
        next = { children: [null, null] };
        node.children[bit] = next;
      }
      node = next;
    }
  }
  const nodes: Node[] = [];
  const queue = [root];
  while (queue.length) {
    const n = queue.shift()!;
    n.index = nodes.length;
    nodes.push(n);
    for (const c of n.children) if (c && typeof c === 'object') queue.push(c);
  }
  const nodeCount = nodes.length;
  const tree = Buffer.alloc(nodeCount * 6);
  nodes.forEach((n, i) => {
    n.children.forEach((c, side) => {
      const value = c === null ? nodeCount : typeof c === 'number' ? nodeCount + 16 + c : c.index!;
      tree.writeUIntBE(value, i * 6 + side * 3, 3);
    });
  });
  const metadata = Buffer.concat([
    control(7, 9),
    encode('node_count'),
    encode(nodeCount, 32),
    encode('record_size'),
    encode(24, 16),
    encode('ip_version'),
    encode(4, 16),
    encode('database_type'),
    encode(opts.databaseType),
    encode('languages'),
    encode(['en']),
    encode('binary_format_major_version'),
    encode(2, 16),
    encode('binary_format_minor_version'),
    encode(0, 16),
    encode('build_epoch'),
    encode(opts.buildEpoch ?? 1_760_000_000, 64),
    encode('description'),
    encode({ en: `svc test ${opts.databaseType}` }),
  ]);
  return Buffer.concat([tree, Buffer.alloc(16), ...data, Buffer.from([0xab, 0xcd, 0xef]), Buffer.from('MaxMind.com'), metadata]);
}

// Reads Iceberg tables with icebird, an Iceberg reader that is not this
// project's library, for export/iceberg's tests. icebird reads over HTTP
// and turns s3:// paths into AWS URLs; every such URL is sent to the
// S3-compatible endpoint of the request instead (path-style, anonymous).
//
// Request on stdin:
//   {"module": "/abs/path/icebird/src/index.js", "endpoint": "http://127.0.0.1:9000",
//    "reads": [{"table": "documents", "tableUrl": "s3://bucket/prefix/documents",
//               "metadataFileName": "00001-....metadata.json"}]}
// Response on stdout: one object per read, in order:
//   [{"table": ..., "metadataFileName": ..., "manifestList": "s3://...", "summary": {...},
//     "files": ["s3://..."], "rows": [{column: value}]}]
// BigInt values are written as strings; numbers as JSON numbers. (icebird
// parses metadata with JSON.parse, so snapshot IDs lose digits: the
// snapshot is named by its manifest list.)

import zlib from 'node:zlib'

const chunks = []
for await (const chunk of process.stdin) chunks.push(chunk)
const req = JSON.parse(Buffer.concat(chunks).toString('utf8'))
const { icebergMetadata, icebergManifests, icebergRead } = await import(req.module)

const realFetch = globalThis.fetch
const aws = /^https:\/\/([^./]+)\.s3\.amazonaws\.com\//
globalThis.fetch = async (input, init) => {
  let url = typeof input === 'string' ? input : input.url
  if (!aws.test(url)) throw new Error(`icebird.mjs: unexpected URL ${url}`)
  url = url.replace(aws, (_, bucket) => `${req.endpoint}/${bucket}/`)
  const res = await realFetch(url, init)
  if (!url.endsWith('.avro') || !res.ok) return res
  return new Response(inflateAvro(Buffer.from(await res.arrayBuffer())), { status: res.status })
}

// inflateAvro rewrites an Avro container file whose blocks are deflated
// (iceberg-go's manifests and manifest lists) as one with uncompressed
// blocks, the same records. icebird inflates blocks with
// hyparquet-compressors' gunzip, which fails with "offset is out of
// bounds" on every stream Go's compress/flate writes (it takes the bytes
// after the final block for another gzip member); node's zlib does the
// inflating here instead, and icebird still decodes every record.
function inflateAvro(buf) {
  if (buf.toString('latin1', 0, 4) !== 'Obj\x01') return buf
  let o = 4
  const meta = []
  for (;;) {
    let count
    ;[count, o] = readLong(buf, o)
    if (count === 0) break
    if (count < 0) {
      count = -count
      ;[, o] = readLong(buf, o) // the block's size in bytes
    }
    for (let i = 0; i < count; i++) {
      let n
      ;[n, o] = readLong(buf, o)
      const key = buf.toString('utf8', o, o + n)
      o += n
      ;[n, o] = readLong(buf, o)
      meta.push([key, buf.subarray(o, o + n)])
      o += n
    }
  }
  const sync = buf.subarray(o, o + 16)
  o += 16
  const codec = meta.find(([k]) => k === 'avro.codec')?.[1].toString()
  if (codec !== 'deflate') return buf
  const parts = [Buffer.from('Obj\x01', 'latin1'), writeLong(meta.length)]
  for (const [k, v] of meta) {
    const key = Buffer.from(k)
    const value = k === 'avro.codec' ? Buffer.from('null') : v
    parts.push(writeLong(key.length), key, writeLong(value.length), value)
  }
  parts.push(writeLong(0), sync)
  while (o < buf.length) {
    let count, size
    ;[count, o] = readLong(buf, o)
    ;[size, o] = readLong(buf, o)
    const data = zlib.inflateRawSync(buf.subarray(o, o + size))
    o += size + 16
    parts.push(writeLong(count), writeLong(data.length), data, sync)
  }
  return Buffer.concat(parts)
}

function readLong(buf, o) {
  let n = 0n
  let shift = 0n
  let b
  do {
    b = buf[o++]
    n |= BigInt(b & 0x7f) << shift
    shift += 7n
  } while (b & 0x80)
  return [Number((n >> 1n) ^ -(n & 1n)), o]
}

function writeLong(v) {
  let n = BigInt(v)
  n = (n << 1n) ^ (n >> 63n)
  const out = []
  while (n > 0x7fn) {
    out.push(Number((n & 0x7fn) | 0x80n))
    n >>= 7n
  }
  out.push(Number(n))
  return Buffer.from(out)
}

const out = []
for (const r of req.reads) {
  const tableUrl = r.tableUrl
  const metadata = await icebergMetadata({ tableUrl, metadataFileName: r.metadataFileName })
  const snapshot = metadata.snapshots.find(s => s['snapshot-id'] === metadata['current-snapshot-id'])
  const manifests = await icebergManifests(metadata)
  const files = []
  for (const { entries } of manifests) {
    for (const e of entries) if (e.status !== 2 && !e.data_file.content) files.push(e.data_file.file_path)
  }
  const rows = files.length === 0 ? [] : await icebergRead({ tableUrl, metadata })
  out.push({ table: r.table, metadataFileName: r.metadataFileName, manifestList: snapshot['manifest-list'],
    summary: snapshot.summary, files, rows })
}
process.stdout.write(JSON.stringify(out, (_, v) => {
  if (typeof v === 'bigint') return v.toString()
  if (v instanceof Date) return v.toISOString()
  return v
}))

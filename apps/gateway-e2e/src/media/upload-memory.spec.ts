/**
 * Oversized uploads are refused while they are read, not buffered: an edge of its own (so that no
 * other test's traffic moves its memory) takes 20 concurrent 60 MB image edits — 1.2 GB in all —
 * and answers each a 413 (the rest of each body is read and dropped, so that every client gets
 * its answer), while its peak resident memory grows by a small fraction of what was sent. Nothing
 * reaches the upstream.
 *
 * The bound: an edge that buffered the uploads would hold at least the 50 MB read of each, 1 GB;
 * one that streams them holds a few chunks per connection, and its peak is V8's garbage cycle: the
 * dropped 64 KB socket chunks are freed in batches, a collection being due once some 64 MB of
 * them have piled up. Measured: about 30 MB on a quiet machine, up to 85 MB with both cores busy.
 * The test allows 180 MB (3 uploads' worth, 15 % of what was sent).
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { PNG } from 'pngjs';
import { createAccount, TestAccount } from '../support/api';
import { fakeRequests, marker } from '../support/clients';
import type { MultipartSummary } from '../support/fake-openai-audio';
import { startExtraEdge, waitForExit } from '../support/processes';

const UPLOAD_BYTES = 60 * 1000 * 1000;
const CONCURRENT = 20;
const CHUNK = 1024 * 1024;

/** A field of `/proc/<pid>/status` (VmRSS, VmHWM), in bytes. */
function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${field}:`));
  if (!line) throw new Error(`no ${field} for ${pid}`);
  return Number(/(\d+)\s*kB/.exec(line)![1]) * 1024;
}

/** A multipart body of one image file of `fileBytes` bytes (a PNG header, then zeros) and its text fields. */
function multipart(boundary: string, filename: string, fileBytes: number): Buffer {
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\np\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nfake-openai-image\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="${filename}"\r\nContent-Type: image/png\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = Buffer.alloc(head.length + fileBytes + tail.length);
  head.copy(body);
  PNG.sync.write(new PNG({ width: 1, height: 1 })).copy(body, head.length);
  tail.copy(body, head.length + fileBytes);
  return body;
}

/**
 * Sends `body` in 1 MiB writes, waiting for each to drain, until the answer comes; resolves with
 * its status and error code.
 */
function upload(base: string, key: string, boundary: string, body: Buffer): Promise<{ status: number; error?: string }> {
  return new Promise((resolve) => {
    let sent = 0;
    let answered = false;
    const request = httpRequest(`${base}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length },
    });
    request.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, error: JSON.parse(Buffer.concat(chunks).toString('utf8')).error?.code });
      });
    });
    // Writing after the answer may meet a closed socket: that is the refusal's, not a failure.
    request.on('error', (error) => {
      if (!answered) resolve({ status: 0, error: String(error) });
    });
    const pump = (): void => {
      while (!answered && sent < body.length) {
        const chunk = body.subarray(sent, sent + CHUNK);
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', pump);
      }
      if (!answered) request.end();
    };
    pump();
  });
}

describe('oversized uploads and the edge memory', () => {
  let account: TestAccount;
  let edge: ChildProcess;
  let base: string;

  beforeAll(async () => {
    account = createAccount('pro', '100');
    ({ edge, base } = await startExtraEdge({}, 'upload-memory-edge'));
  });
  afterAll(async () => {
    edge.kill('SIGTERM');
    await waitForExit(edge.pid!);
  });

  it(`${CONCURRENT} concurrent 60 MB images are each a 413; the edge's peak RSS grows by under 15 % of the 1.2 GB sent`, async () => {
    const pid = edge.pid!;
    const boundary = `----upload-memory-${Date.now()}`;
    const name = `${marker('rss')}.png`;
    // Warm the route up (a small edit each way), so that what is measured is the uploads, not first use.
    const small = multipart(boundary, `warm-${name}`, 4096);
    for (let i = 0; i < 3; i++) expect((await upload(base, account.masterKey, boundary, small)).status).toBe(200);

    const body = multipart(boundary, name, UPLOAD_BYTES);
    // Peak RSS from here on: writing 5 to clear_refs resets VmHWM to the current RSS.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const before = statusBytes(pid, 'VmRSS');
    const results = await Promise.all(Array.from({ length: CONCURRENT }, () => upload(base, account.masterKey, boundary, body)));
    const peak = statusBytes(pid, 'VmHWM');

    expect(results.map((result) => [result.status, result.error])).toEqual(Array.from({ length: CONCURRENT }, () => [413, 'request_too_large']));
    expect(peak - before).toBeLessThan(3 * UPLOAD_BYTES);
    const reached = (await fakeRequests('openai')).filter((request) => (request.body as MultipartSummary | undefined)?.files?.image?.filename === name);
    expect(reached).toEqual([]);
  });
});

import { S3Client } from '@aws-sdk/client-s3';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createObjectStore, S3ObjectStore } from './s3.object-store';

interface FakeObject {
  body: Buffer;
  contentType?: string;
  meta: Record<string, string>;
}

/**
 * A fake S3-compatible server (path-style: /<bucket>/<key>): PUT stores the body, Content-Type and
 * x-amz-meta-* headers; GET returns them, or S3's NoSuchKey error. It stands in for the provider.
 */
function fakeS3(): { server: Server; objects: Map<string, FakeObject>; requests: { method: string; path: string; auth: boolean }[] } {
  const objects = new Map<string, FakeObject>();
  const requests: { method: string; path: string; auth: boolean }[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = decodeURIComponent(new URL(request.url ?? '/', 'http://fake').pathname);
      requests.push({ method: request.method ?? '', path, auth: String(request.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256') });
      if (request.method === 'PUT') {
        const meta = Object.fromEntries(
          Object.entries(request.headers)
            .filter(([name]) => name.startsWith('x-amz-meta-'))
            .map(([name, value]) => [name.slice('x-amz-meta-'.length), String(value)]),
        );
        objects.set(path, { body: Buffer.concat(chunks), contentType: request.headers['content-type'], meta });
        response.writeHead(200, { etag: '"fake"' }).end();
        return;
      }
      const object = objects.get(path);
      if (request.method === 'GET' && object) {
        const headers: Record<string, string> = { 'content-length': String(object.body.length) };
        if (object.contentType) headers['content-type'] = object.contentType;
        for (const [name, value] of Object.entries(object.meta)) headers[`x-amz-meta-${name}`] = value;
        response.writeHead(200, headers).end(object.body);
        return;
      }
      response
        .writeHead(404, { 'content-type': 'application/xml' })
        .end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
    });
  });
  return { server, objects, requests };
}

describe('S3ObjectStore against an S3-compatible server', () => {
  const fake = fakeS3();
  let endpoint: string;

  beforeAll(async () => {
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => fake.server.close(() => resolve()));
  });

  const store = () =>
    createObjectStore({
      OBJECT_STORE: 's3',
      OBJECT_STORE_DIR: '',
      S3_BUCKET: 'media',
      S3_REGION: 'us-east-1',
      S3_ENDPOINT: endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'AKIDFAKE',
      S3_SECRET_ACCESS_KEY: 'fake-secret',
    } as Parameters<typeof createObjectStore>[0]);

  it('is what OBJECT_STORE=s3 configures, and writes and reads objects with their type and visibility, signed', async () => {
    const s3 = store();
    expect(s3).toBeInstanceOf(S3ObjectStore);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    await s3.put('images/a.png', png, { contentType: 'image/png', public: true });
    await s3.put('videos/b.avi', Buffer.from('avi'), { contentType: 'video/x-msvideo', public: false });
    expect(fake.objects.get('/media/images/a.png')).toMatchObject({ contentType: 'image/png', meta: { public: 'true' } });
    expect(await s3.get('images/a.png')).toEqual({ body: png, metadata: { contentType: 'image/png', public: true } });
    expect(await s3.get('videos/b.avi')).toEqual({ body: Buffer.from('avi'), metadata: { contentType: 'video/x-msvideo', public: false } });
    expect(fake.requests.every((request) => request.auth)).toBe(true);
  });

  it('answers null for an object that does not exist, and refuses keys that could escape their prefix', async () => {
    const s3 = store();
    expect(await s3.get('images/missing.png')).toBeNull();
    await expect(s3.put('../secrets', Buffer.from('x'), { contentType: 'text/plain', public: true })).rejects.toThrow();
  });

  it('surfaces other failures (a wrong endpoint) as errors, not as a missing object', async () => {
    const broken = new S3ObjectStore(
      new S3Client({
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:1',
        forcePathStyle: true,
        maxAttempts: 1,
        credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      }),
      'media',
    );
    await expect(broken.get('images/a.png')).rejects.toThrow();
  });
});

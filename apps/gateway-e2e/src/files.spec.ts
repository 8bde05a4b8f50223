import { randomUUID } from 'node:crypto';
import { FilesystemObjectStore, FileUrls } from '@gateway/storage';
import { suiteInfo } from './support/suite-info';

/** Generated media is served by the edge from the object store the router and the video worker write. */
describe('GET /v1/files/<key>', () => {
  const info = suiteInfo();
  const store = new FilesystemObjectStore(info.env.OBJECT_STORE_DIR);
  const urls = new FileUrls(`${info.edgeA}/v1`, info.env.FILE_URL_SECRET, 3600);
  const png = Buffer.from('89504e470d0a1a0a', 'hex');

  it('serves a public object without a key', async () => {
    const key = `images/${randomUUID()}.png`;
    await store.put(key, png, { contentType: 'image/png', public: true });
    const response = await fetch(urls.urlFor(key, true));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await response.arrayBuffer())).toEqual(png);
  });

  it('serves a private object only with a valid, unexpired signature (403 otherwise)', async () => {
    const key = `images/${randomUUID()}.png`;
    await store.put(key, png, { contentType: 'image/png', public: false });
    const signed = urls.urlFor(key, false);
    const ok = await fetch(signed);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('private, no-store');
    expect(Buffer.from(await ok.arrayBuffer())).toEqual(png);
    // Any edge replica accepts it: the secret is shared.
    expect((await fetch(signed.replace(info.edgeA, info.edgeB))).status).toBe(200);

    const unsigned = await fetch(`${info.edgeA}/v1/files/${key}`);
    expect(unsigned.status).toBe(403);
    expect(((await unsigned.json()) as any).error.message).toMatch(/private/);
    const tampered = new URL(signed);
    tampered.searchParams.set('signature', `${tampered.searchParams.get('signature')!.slice(0, -2)}AA`);
    expect((await fetch(tampered)).status).toBe(403);
    const otherSecret = new FileUrls(`${info.edgeA}/v1`, 'x'.repeat(40), 3600).urlFor(key, false);
    expect((await fetch(otherSecret)).status).toBe(403);
    const expired = new FileUrls(`${info.edgeA}/v1`, info.env.FILE_URL_SECRET, 60).urlFor(key, false, Date.now() - 3600_000);
    const expiredResponse = await fetch(expired);
    expect(expiredResponse.status).toBe(403);
    expect(((await expiredResponse.json()) as any).error.message).toMatch(/expired/);
  });

  it('answers 404 for a missing object or a key outside the store', async () => {
    expect((await fetch(`${info.edgeA}/v1/files/images/${randomUUID()}.png`)).status).toBe(404);
    expect((await fetch(`${info.edgeA}/v1/files/images/..%2F..%2Fetc%2Fpasswd`)).status).toBe(404);
    expect((await fetch(`${info.edgeA}/v1/files/IMAGES/X.png`)).status).toBe(404);
  });
});

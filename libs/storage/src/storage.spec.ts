import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BaseEnv, parseEnv } from '@gateway/platform';
import { FileUrls } from './file-urls';
import { WithObjectStoreEnv } from './object-store.env';
import { FilesystemObjectStore } from './filesystem.object-store';
import { isValidObjectKey } from './object-store';

describe('FilesystemObjectStore', () => {
  const dir = mkdtempSync(join(tmpdir(), 'objects-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('returns what was put, with its metadata', async () => {
    const store = new FilesystemObjectStore(dir);
    await store.put('images/abc.png', Buffer.from([1, 2, 3]), { contentType: 'image/png', public: true });
    const object = await store.get('images/abc.png');
    expect(object).toEqual({ body: Buffer.from([1, 2, 3]), metadata: { contentType: 'image/png', public: true } });
  });

  it('returns null for a missing object and refuses keys that leave its directory', async () => {
    const store = new FilesystemObjectStore(dir);
    expect(await store.get('images/missing.png')).toBeNull();
    await expect(store.get('images/../../etc/passwd')).rejects.toThrow(/invalid object key/);
    expect(['a/../b', '/abs', 'A/b', 'x/.', '', 'images/x.png.meta.json/..'].map(isValidObjectKey)).toEqual([false, false, false, false, false, false]);
  });
});

describe('FileUrls', () => {
  const urls = new FileUrls('http://gw.example/v1/', 'secret', 3600);
  const now = Date.UTC(2026, 0, 1);

  it('signs private URLs and accepts them until they expire', () => {
    const url = new URL(urls.urlFor('images/a.png', false, now));
    expect(url.pathname).toBe('/v1/files/images/a.png');
    const [expires, signature] = [url.searchParams.get('expires'), url.searchParams.get('signature')];
    expect(Number(expires)).toBe(now / 1000 + 3600);
    expect(urls.check('images/a.png', expires, signature, now)).toBe('valid');
    expect(urls.check('images/a.png', expires, signature, now + 3601_000)).toBe('expired');
    expect(urls.check('images/b.png', expires, signature, now)).toBe('invalid');
    expect(urls.check('images/a.png', String(Number(expires) + 1), signature, now)).toBe('invalid');
    expect(urls.check('images/a.png', undefined, undefined, now)).toBe('invalid');
    expect(new FileUrls('http://gw.example/v1', 'other', 3600).check('images/a.png', expires, signature, now)).toBe('invalid');
  });

  it('leaves public URLs plain', () => {
    expect(urls.urlFor('images/a.png', true, now)).toBe('http://gw.example/v1/files/images/a.png');
  });
});

describe('WithObjectStoreEnv', () => {
  const Env = WithObjectStoreEnv(BaseEnv);

  it('defaults to the filesystem and requires a bucket for s3', () => {
    expect(parseEnv(Env, {})).toMatchObject({ OBJECT_STORE: 'filesystem', OBJECT_STORE_DIR: '.local/objects', S3_FORCE_PATH_STYLE: 'true' });
    expect(() => parseEnv(Env, { OBJECT_STORE: 's3' })).toThrow(/S3_BUCKET is required/);
    expect(() => parseEnv(Env, { OBJECT_STORE: 'ftp' })).toThrow(/OBJECT_STORE/);
    expect(parseEnv(Env, { OBJECT_STORE: 's3', S3_BUCKET: 'media' })).toMatchObject({ S3_BUCKET: 'media' });
  });
});

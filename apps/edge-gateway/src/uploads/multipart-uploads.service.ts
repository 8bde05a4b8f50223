import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError, ErrorCode } from '@gateway/errors';
import { OBJECT_STORE, type ObjectStore } from '@gateway/storage';
import Busboy from 'busboy';
import type { FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import type { UploadFileField, UploadSpec } from './multipart-upload.decorator';

/** A staged file as the route's body carries it (`StagedFile` in the contracts lib) and what its inspection added. */
export type StagedFileRef = { key: string; filename: string; content_type: string; bytes: number } & Record<string, unknown>;

export interface StagedUpload {
  /** The text fields (converted as the spec says) and, under each file field, its `StagedFileRef`. */
  body: Record<string, unknown>;
  /** Object-store keys of the staged files: deleted once the request is over. */
  keys: string[];
}

/** Bounds on the text side of a multipart body: what a form of a few short fields needs. */
const TEXT_LIMITS = { fields: 64, fieldSize: 64 * 1024, parts: 96 };
/** Where staged uploads live in the object store (the API notes tell operators to expire the prefix). */
export const UPLOAD_PREFIX = 'uploads';

const tooLarge = (message: string, field?: string): DomainError => new DomainError(ErrorCode.RequestTooLarge, message, field);
const invalid = (message: string, field?: string): DomainError => new DomainError(ErrorCode.InvalidRequest, message, field);

/**
 * Reads a multipart body as a stream (busboy) and stages each file in the object store as it
 * arrives, never holding one whole: bytes are counted per file and for the whole body while they
 * are read, and the first byte over a limit ends the read with a 413 (the rest of the body is
 * discarded unread, the staged files deleted). A file field's `inspect` reads a tee of the file
 * (the audio's duration from its container header) while it is stored.
 */
@Injectable()
export class MultipartUploads {
  private readonly logger = new Logger(MultipartUploads.name);

  constructor(@Inject(OBJECT_STORE) private readonly store: ObjectStore) {}

  async stage(request: FastifyRequest, spec: UploadSpec): Promise<StagedUpload> {
    const contentType = request.headers['content-type'] ?? '';
    const fileFields = Object.keys(spec.files);
    if (!/^multipart\/form-data/i.test(contentType)) {
      throw invalid(`This route takes multipart/form-data with the file in ${fileFields.map((name) => `\`${name}\``).join(', ')}`, fileFields[0]);
    }
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > spec.maxRequestBytes) {
      request.raw.resume();
      throw tooLarge(`The request body is ${declared} bytes, more than the ${spec.maxRequestBytes} bytes this route takes`);
    }
    return new Promise<StagedUpload>((resolve, reject) => new UploadRead(this.store, request, spec, resolve, reject, this.logger).start());
  }

  /** Deletes staged files (once the request is over); a failure is logged, never thrown. */
  async discard(keys: string[]): Promise<void> {
    await Promise.all(
      keys.map((key) => this.store.delete(key).catch((error: unknown) => this.logger.warn(`could not delete the staged upload ${key}: ${String(error)}`))),
    );
  }
}

/** One multipart body being read: its state, and the one way it ends (resolved, or rejected with everything staged deleted). */
class UploadRead {
  private readonly fields: Record<string, unknown> = {};
  private readonly files = new Map<string, Promise<StagedFileRef>[]>();
  private readonly keys: string[] = [];
  private readonly open = new Set<Readable>();
  private busboy?: Busboy.Busboy;
  private requestBytes = 0;
  private settled = false;

  constructor(
    private readonly store: ObjectStore,
    private readonly request: FastifyRequest,
    private readonly spec: UploadSpec,
    private readonly resolve: (upload: StagedUpload) => void,
    private readonly reject: (error: unknown) => void,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const largestFile = Math.max(0, ...Object.values(this.spec.files).map((file) => file.maxBytes));
    try {
      this.busboy = Busboy({
        headers: this.request.headers,
        // One byte over the largest file limit is enough to tell; each field's own limit is counted here.
        limits: { ...TEXT_LIMITS, files: Object.values(this.spec.files).reduce((sum, file) => sum + (file.maxCount ?? 1), 0), fileSize: largestFile + 1 },
      });
    } catch (error) {
      return this.fail(invalid(`The multipart body cannot be read: ${(error as Error).message}`));
    }
    const raw = this.request.raw;
    raw.on('data', (chunk: Buffer) => {
      this.requestBytes += chunk.length;
      if (this.requestBytes > this.spec.maxRequestBytes)
        this.fail(tooLarge(`The request body is larger than the ${this.spec.maxRequestBytes} bytes this route takes`));
    });
    raw.once('aborted', () => this.fail(invalid('The client closed the connection before the body was complete')));
    this.busboy.on('file', (field, stream, info) => this.onFile(field, stream, info));
    this.busboy.on('field', (field, value, info) => this.onField(field, value, info));
    this.busboy.on('filesLimit', () => this.fail(invalid(`Too many files: this route takes one in each of ${Object.keys(this.spec.files).join(', ')}`)));
    this.busboy.on('fieldsLimit', () => this.fail(invalid(`Too many fields: at most ${TEXT_LIMITS.fields}`)));
    this.busboy.on('partsLimit', () => this.fail(invalid(`Too many parts: at most ${TEXT_LIMITS.parts}`)));
    this.busboy.on('error', (error: Error) => this.fail(invalid(`The multipart body cannot be read: ${error.message}`)));
    this.busboy.on('close', () => void this.finish());
    raw.pipe(this.busboy);
  }

  private onField(name: string, value: string, info: Busboy.FieldInfo): void {
    if (this.settled) return;
    const field = name.endsWith('[]') ? name.slice(0, -2) : name;
    if (info.nameTruncated || info.valueTruncated) return this.fail(invalid(`${field} is longer than ${TEXT_LIMITS.fieldSize} bytes`, field));
    if (field in this.spec.files) return this.fail(invalid(`${field} must be a file, not a text field`, field));
    if (this.spec.arrays?.includes(field)) {
      const list = (this.fields[field] as string[] | undefined) ?? [];
      list.push(value);
      this.fields[field] = list;
    } else if (this.spec.numbers?.includes(field)) {
      const number = Number(value);
      this.fields[field] = value.trim() !== '' && Number.isFinite(number) ? number : value;
    } else if (this.spec.booleans?.includes(field)) {
      this.fields[field] = value === 'true' ? true : value === 'false' ? false : value;
    } else {
      this.fields[field] = value;
    }
  }

  private onFile(name: string, stream: Readable, info: Busboy.FileInfo): void {
    if (this.settled) return void stream.resume();
    const field = name.endsWith('[]') ? name.slice(0, -2) : name;
    const rules = this.spec.files[field];
    if (!rules) {
      stream.resume();
      return this.fail(invalid(`Unexpected file in ${field}: this route takes a file only in ${Object.keys(this.spec.files).join(', ')}`, field));
    }
    const maxCount = rules.maxCount ?? 1;
    const list = this.files.get(field) ?? [];
    if (list.length >= maxCount) {
      stream.resume();
      return this.fail(invalid(maxCount === 1 ? `${field} takes one file` : `${field} takes at most ${maxCount} files`, field));
    }
    const staged = this.stageFile(field, stream, info, rules);
    // Settled through finish() or fail(); a rejection before then must not go unhandled.
    staged.catch((error: unknown) => this.fail(error));
    list.push(staged);
    this.files.set(field, list);
  }

  private async stageFile(field: string, stream: Readable, info: Busboy.FileInfo, rules: UploadFileField): Promise<StagedFileRef> {
    const key = `${UPLOAD_PREFIX}/${randomUUID()}`;
    this.keys.push(key);
    this.open.add(stream);
    const sink = new PassThrough();
    const stored = this.store.putStream(key, sink, { contentType: info.mimeType || 'application/octet-stream', public: false });
    stored.catch(() => undefined);
    const filename = info.filename ?? field;
    let tee: PassThrough | undefined;
    let inspected: Promise<Record<string, unknown>> | undefined;
    let inspecting = false;
    if (rules.inspect) {
      tee = new PassThrough();
      inspecting = true;
      inspected = rules.inspect(tee, { field, filename, mimeType: info.mimeType });
      inspected
        .catch(() => undefined)
        .finally(() => {
          // The inspection has what it needs: it is fed no more, and what it left unread is dropped.
          inspecting = false;
          tee!.resume();
        });
    }
    let bytes = 0;
    try {
      for await (const chunk of stream) {
        bytes += (chunk as Buffer).length;
        if (bytes > rules.maxBytes) throw tooLarge(`${field} is larger than the ${rules.maxBytes} bytes this route takes per file`, field);
        if (!sink.write(chunk)) await Promise.race([once(sink, 'drain'), stored]);
        if (inspecting && !tee!.write(chunk)) await Promise.race([once(tee!, 'drain'), inspected]);
      }
      sink.end();
      tee?.end();
      if (bytes === 0) throw invalid(`${field} is empty`, field);
      const [written, details] = await Promise.all([stored, inspected ?? Promise.resolve({})]);
      return { key, filename, content_type: info.mimeType || 'application/octet-stream', bytes: written, ...details };
    } catch (error) {
      sink.destroy();
      tee?.destroy();
      throw error;
    } finally {
      this.open.delete(stream);
    }
  }

  private async finish(): Promise<void> {
    if (this.settled) return;
    let staged: [string, StagedFileRef | StagedFileRef[]][];
    try {
      staged = await Promise.all(
        [...this.files].map(async ([field, files]) => {
          const refs = await Promise.all(files);
          return [field, (this.spec.files[field].maxCount ?? 1) > 1 ? refs : refs[0]] as [string, StagedFileRef | StagedFileRef[]];
        }),
      );
    } catch (error) {
      return this.fail(error);
    }
    if (this.settled) return;
    for (const [field, rules] of Object.entries(this.spec.files)) {
      if (rules.optional) continue;
      if (!this.files.has(field)) return this.fail(invalid(`${field} is required: a file part named ${field}`, field));
    }
    this.settled = true;
    this.resolve({ body: { ...this.fields, ...Object.fromEntries(staged) }, keys: [...this.keys] });
  }

  /** Ends the read once: stops reading (the rest of the body is discarded), deletes what was staged, rejects. */
  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    const raw = this.request.raw;
    if (this.busboy) raw.unpipe(this.busboy);
    raw.resume();
    for (const stream of this.open) stream.destroy();
    this.reject(error);
    // Once every write has ended (a file finishing at this moment is renamed into place first), delete.
    void Promise.allSettled([...this.files.values()].flat()).then(() =>
      Promise.all(
        this.keys.map((key) =>
          this.store.delete(key).catch((cause: unknown) => this.logger.warn(`could not delete the staged upload ${key}: ${String(cause)}`)),
        ),
      ),
    );
  }
}

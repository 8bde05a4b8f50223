import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiConsumes } from '@nestjs/swagger';
import type { Readable } from 'node:stream';
import type { EdgeEnv } from '../config/edge.env';

export const MULTIPART_UPLOAD = 'policy:multipart-upload';

/** One file field of a multipart route. */
export interface UploadFileField {
  /** Bytes one file may have; one more is a 413 naming the field. */
  maxBytes: number;
  /**
   * Files the field takes (sent as `name` or `name[]`, repeated); default 1. Above 1 the body
   * carries a list of references under `name`, even for one file.
   */
  maxCount?: number;
  /** The field may be left out (a mask); by default a missing file is a 400 naming it. */
  optional?: boolean;
  /**
   * Reads the file as it streams in (a tee of what goes to the store; it may stop reading early)
   * and returns what the route's body should carry about it beside its staged reference (an
   * audio file's `duration_seconds`); throws a `DomainError` (400 naming the field) to refuse it.
   */
  inspect?: (stream: Readable, part: { field: string; filename: string; mimeType: string }) => Promise<Record<string, unknown>>;
}

/** What a multipart route takes: its file fields and limits; every other part is a text field. */
export interface UploadSpec {
  files: Record<string, UploadFileField>;
  /** The whole body, file parts and text fields alike; more is a 413. */
  maxRequestBytes: number;
  /** Text fields sent as `name[]` (or repeated): gathered into an array under `name`. */
  arrays?: string[];
  /** Text fields that are numbers (`temperature`): converted when they read as one, else left for the validation to name. */
  numbers?: string[];
  /** Text fields that are `true` / `false`. */
  booleans?: string[];
}

/**
 * The route takes `multipart/form-data`: after authentication, `MultipartUploadGuard` streams its
 * files into the object store under the spec's limits and hands the route a body of its text
 * fields and file references, before admission prices it. The limits come from the edge's env.
 */
export const MultipartUpload = (spec: (env: EdgeEnv) => UploadSpec): MethodDecorator =>
  applyDecorators(SetMetadata(MULTIPART_UPLOAD, spec), ApiConsumes('multipart/form-data'));

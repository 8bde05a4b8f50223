import type { FastifyInstance } from 'fastify';

/**
 * Multipart bodies are left unread by Fastify: the route's `@MultipartUpload` streams them after
 * the key is authenticated (`MultipartUploadGuard`), so nothing is read or stored for a caller
 * who may not call, and no body is buffered. A route without it gets no body.
 */
export function registerMultipartBodyParser(fastify: FastifyInstance): void {
  fastify.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null, undefined));
}

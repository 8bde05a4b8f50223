/** JetStream streams, subjects and durable consumers. Persisted names: change only with a migration plan. */
export const UsageStream = {
  name: 'USAGE',
  subjects: ['usage.>'],
  /** One usage event per request, published by whoever served it. */
  recordedSubject: 'usage.recorded',
  /** The metering-service replicas share this durable consumer. */
  meteringConsumer: 'metering',
} as const;

/**
 * Usage events metering set aside (dead letters): each one the event's original bytes and why it
 * could not be recorded (`UsageDeadLetter`). Kept until an operator replays it (`npm run admin --
 * usage replay`). Its subjects lie outside `usage.>`: two streams may not share a subject.
 */
export const UsageDeadStream = {
  name: 'USAGE_DEAD',
  subjects: ['usage-dead.>'],
  subject: 'usage-dead.event',
} as const;

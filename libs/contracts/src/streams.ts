/** JetStream streams, subjects and durable consumers. Persisted names: change only with a migration plan. */
export const UsageStream = {
  name: 'USAGE',
  subjects: ['usage.>'],
  /** One usage event per request, published by whoever served it. */
  recordedSubject: 'usage.recorded',
  /** The metering-service replicas share this durable consumer. */
  meteringConsumer: 'metering',
} as const;

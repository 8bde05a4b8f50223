/** BullMQ queue and job names. Persisted in Redis: treat the values as wire names. */
export const Queues = {
  video: 'video-generation',
} as const;

export const VideoJobs = {
  generate: 'generate',
} as const;

/** Reading Prometheus text exposition (what `/metrics` serves) in the tests. */

export interface Scrape {
  status: number;
  contentType: string | null;
  text: string;
}

export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a metric, with their labels. */
export function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const found: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const match = SAMPLE.exec(line);
    if (!match || match[1] !== name) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(LABEL)].map(([, key, value]) => [key, value]));
    found.push({ labels, value: Number(match[3]) });
  }
  return found;
}

/** The sum of a metric's samples whose labels include `labels` (0 when there are none). */
export function valueOf(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text, name)
    .filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}

/** Whether the exposition declares the metric (its `# TYPE` line), whatever its samples. */
export function declares(text: string, name: string, type: 'counter' | 'gauge' | 'histogram'): boolean {
  return text.split('\n').includes(`# TYPE ${name} ${type}`);
}

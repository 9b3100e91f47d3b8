/** The types of `parse-prometheus-text-format` (a CommonJS module that ships none), as far as the bench uses it. */
declare module 'parse-prometheus-text-format' {
  /** One sample of a family: a counter's or gauge's `value`, with its labels. */
  interface PrometheusSample {
    value?: string;
    labels?: Record<string, string>;
  }
  /** One metric family, as prom2json writes it. */
  interface PrometheusFamily {
    name: string;
    help: string;
    type: string;
    metrics: PrometheusSample[];
  }
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}

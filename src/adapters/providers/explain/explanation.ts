/** The shape of an adapter's explanation (`asyncjob adapter explain`), shared by its sections. */

/** One part of the explanation: a stable `id`, a title and its sentences (a nested sentence starts with two spaces). */
export interface ExplainSection {
  id: 'provider' | 'create' | 'job' | 'status' | 'result' | 'cancel' | 'reconciliation' | 'webhook' | 'policy';
  title: string;
  lines: string[];
}

/** The explanation of one contract. */
export interface ContractExplanation {
  name: string;
  description: string | null;
  /** The preset the document named, if the caller knows it (the validated contract no longer says). */
  preset: string | null;
  sections: ExplainSection[];
}

/** Options of `describeContract` (src/adapters/providers/explain.ts). */
export interface ExplainOptions {
  /** The `preset:` the document named. */
  preset?: string;
  /** Shown instead of `baseUrl` in URLs (e.g. `${ACME_URL}` when the variable is not set where this runs). */
  baseUrlLabel?: string;
}

/**
 * The seam between the CLI's commands and the world: the client, output streams, files, the clock, and the
 * commands that own their own arguments. Tests pass fakes; {@link processDeps} is the real process.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { runAuditCommand } from '../audit/cli';
import {
  AsyncJobClient,
  type EscalationView,
  type ListOptions,
  type OperationDescription,
  type OperationListing,
  type QueryOptions,
  type StartedRun,
  type StartOptions,
  type VerifiedResultStream,
  type WaitOptions,
  type WatchOptions,
} from '../client';
import { runDev } from '../dev/demo';
import { runDoctorCli } from '../doctor/cli';
import { runSimulateCommand } from '../simulator/cli';
import { runWorker } from '../worker';
import type { Decision } from '../core/escalation';
import type * as McpCommand from './mcp-command';
import type { OperationRecord, StartRequest } from '../core/operation';
import type { CancelRequest, OperationSummary } from '../workflows/messages';

/** What `start` reports of a started or joined operation. */
export type StartedOperation = StartedRun;

/** The client operations the CLI uses; `AsyncJobClient` provides them all. */
export interface CliClient {
  start(request: StartRequest, options?: StartOptions): Promise<StartedOperation>;
  get(operationId: string, options?: QueryOptions): Promise<OperationRecord>;
  escalation(operationId: string, options?: QueryOptions): Promise<EscalationView | null>;
  cancel(operationId: string, request: CancelRequest): Promise<{ accepted: true; localState: string }>;
  decide(operationId: string, decision: Decision): Promise<{ accepted: true; localState: string }>;
  result(operationId: string, options?: WaitOptions): Promise<OperationSummary>;
  watch(operationId: string, options?: WatchOptions): AsyncIterable<OperationRecord>;
  list(options: ListOptions): Promise<OperationListing[]>;
  describeOperation(operationId: string): Promise<OperationDescription>;
  /** The collected result's bytes, failing the stream unless they match the recorded sha256 and size. */
  readResult(operationId: string): Promise<VerifiedResultStream>;
  close(): Promise<void>;
}

/** Everything a command touches outside itself. */
export interface CliDeps {
  /** Connects on first use (commands that need no server never connect). */
  connect(): Promise<CliClient>;
  stdout(text: string): void;
  stderr(text: string): void;
  /** Where `asyncjob result` writes a result's bytes (binary); absent: the process's stdout. */
  stdoutBytes?: NodeJS.WritableStream;
  /** Whether stdout is a terminal (`watch` redraws in place only then). */
  isTTY: boolean;
  /** Reads a UTF-8 file (for `--payload @file`). */
  readFile(path: string): string;
  nowMs(): number;
  sleep(ms: number): Promise<void>;
  /** The environment (`${VAR}` in contract base URLs, ASYNCJOB_PROVIDERS_PATH); `process.env` when absent. */
  env?: Readonly<Record<string, string | undefined>>;
  runAudit(argv: string[]): Promise<number>;
  /** `asyncjob mcp`: the agent tools over MCP (loaded only for this command: the SDK stays out of the others). */
  runMcp(argv: string[]): Promise<number>;
  runSimulate(argv: string[]): Promise<number>;
  /** `asyncjob doctor ...` (src/doctor/cli.ts), which owns its arguments and exit codes. */
  runDoctor?(argv: string[]): Promise<number>;
  /** `asyncjob worker`; `nexusEndpoint` (`--nexus-endpoint`) overrides ASYNCJOB_NEXUS_ENDPOINT. */
  runWorker(options?: { nexusEndpoint?: string }): Promise<number>;
  runDev(): Promise<number>;
}

/**
 * Loads `asyncjob mcp` (and with it the MCP SDK) only when that command runs. A CommonJS `require`, not `import()`:
 * the modules are CommonJS, and `require` resolves `./mcp-command` to the `.ts` source under `tsx/cjs`
 * (`bin/asyncjob`) and to the `.js` file in the compiled `dist/`, where an `import()` of `./mcp-command.js` finds
 * no such file beside the source.
 */
function loadMcpCommand(): typeof McpCommand {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load, typed by the import above
  return require('./mcp-command') as typeof McpCommand;
}

/** The real process: the environment's Temporal connection, stdout/stderr, the file system and the clock. */
export function processDeps(): CliDeps {
  return {
    connect: () => AsyncJobClient.connect(),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stdoutBytes: process.stdout,
    isTTY: process.stdout.isTTY === true,
    readFile: (path) => readFileSync(path, 'utf8'),
    nowMs: () => Date.now(),
    sleep: (ms) => sleep(ms),
    env: process.env,
    runAudit: (argv) => runAuditCommand(argv),
    runMcp: (argv) => loadMcpCommand().runMcpCommand(argv),
    runSimulate: (argv) => runSimulateCommand(argv),
    runDoctor: (argv) => runDoctorCli(argv),
    runWorker: async (options = {}) => {
      await runWorker(
        options.nexusEndpoint !== undefined
          ? { ...process.env, ASYNCJOB_NEXUS_ENDPOINT: options.nexusEndpoint }
          : process.env,
      );
      return 0;
    },
    runDev: () => runDev(),
  };
}

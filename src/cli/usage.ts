/**
 * The help texts of `asyncjob` (docs/cli.md says the same at more length).
 */
import { workerHelpText } from '../doctor/settings';

/** `asyncjob mcp` (src/cli/mcp-command.ts, docs/agents.md). */
export const MCP_USAGE = `usage: asyncjob mcp --policy FILE [--identity agent:NAME]
       asyncjob mcp --policy FILE --http [--host H] [--port N]
  Serves the agent tools over MCP: over stdio as one agent identity (--identity, else the policy's
  stdioIdentity), or over Streamable HTTP at http://H:N/mcp (default 127.0.0.1, any free port; the URL is
  printed on stderr) where each request's bearer token names the agent. FILE (YAML or JSON; default
  $ASYNCJOB_MCP_POLICY) sets each agent's providers, deadline and budget bounds, cancels and result access.
  Connects to Temporal as every command does (TEMPORAL_ADDRESS, ...); reads stories from ASYNCJOB_STORE and
  verified result bodies from ASYNCJOB_ARTIFACTS (else ASYNCJOB_ARTIFACTS_DIR). Exit 2 for a bad command line,
  environment or policy file.`;

/** Per-command usage lines. */
export const COMMAND_USAGE: Readonly<Record<string, string>> = {
  start: `usage: asyncjob start --provider P --operation-id ID --payload JSON|@FILE --started-by WHO --authorised-by WHO
                      --create-deadline D --result-deadline D [--client-reference REF] [--policy JSON|@FILE]
                      [--var NAME=VALUE ...] [--wait [--until-final]] [--allow-unserved-provider]
  Starts an operation (or joins it if it already exists with the same request and settings; a run that failed on
  its input is started again). The request is checked first and nothing is started when it is refused (exit 2),
  nor when no worker serves the provider, unless --allow-unserved-provider (a durable start while the workers are
  down). --var (repeatable) gives a variable the provider's adapter declares; checked against the adapter document
  when ASYNCJOB_PROVIDERS names it here (exit 2 naming the variable), else by the workflow; never a secret (variables
  are recorded). Deadlines are durations (500ms, 30s, 15m, 2h, 1d) from now or ISO-8601 instants. --wait waits until the
  operation ends (exit by its state) or needs a decision (exit 7, the decide command printed); --until-final waits
  through escalations until it ends.`,
  status: `usage: asyncjob status ID
  Shows the operation's local and remote state, progress, budget, next poll and any escalation.`,
  watch: `usage: asyncjob watch ID [--interval D] [--until-final]
  Follows the operation live until a final state or an escalation (exit 7, the decide command printed); changes
  show at once, the line is redrawn at least every --interval (default 1s). --until-final follows it through
  escalations until it ends.`,
  result: `usage: asyncjob result ID [--out FILE]
  Reads the operation's collected result from the artifact store (ASYNCJOB_ARTIFACTS, else ASYNCJOB_ARTIFACTS_DIR)
  and checks it against the sha256 and size recorded when it was validated. Without --out the bytes go to stdout as
  they are read (a mismatch found at their end exits 6 after them); --out FILE writes a temporary file beside FILE
  and renames it only once every byte matched, so a mismatch leaves no file. A worker must answer (the result's
  record is read with a query). Exit 0 written, 6 no result stored, unreadable, or not the recorded bytes.`,
  cancel: `usage: asyncjob cancel ID --by WHO --reason TEXT [--expected-effect TEXT]
  Records the cancel intent and asks the provider once; its confirmation follows (watch it).`,
  decide: `usage: asyncjob decide ID
       asyncjob decide ID --option O --by WHO --reason TEXT [--extend D --checks N] [--transport-failures N]
                          [--rate-limited N] [--job-id J] [--sign | --key FILE]
  Without --option: shows the escalation and the options offered. With it: answers with one of those options.
  --sign signs the decision with WHO's own key, the key file "asyncjob keys new" wrote for WHO (in
  ASYNCJOB_DECIDER_KEYS_DIR); --key FILE signs it with the key in FILE, which must be WHO's. The signature covers
  the operation, this escalation, the option, its bounds, WHO, the reason and the time; the decider policy the
  workers hold says which decisions must be signed (docs/operating.md, "Who may decide").`,
  list: `usage: asyncjob list [--escalated | --state S] [--provider P] [--reason R] [--limit N]
  Lists operations (running or closed, newest first) by state, provider and escalation reason from Temporal's
  search attributes; --escalated is --state escalated.`,
  adapter: `usage: asyncjob adapter validate FILE... [--base-url URL] [--require-env]
       asyncjob adapter explain FILE [--base-url URL] [--require-env]
  Loads provider contracts as the worker does (a file, or a name searched in ASYNCJOB_PROVIDERS_PATH and the
  presets). validate prints "FILE: ok (name, preset, create METHOD path)" or every problem with its field path;
  explain says, step by step, what the adapter will send and read. An unset \${VAR} in baseUrl is a warning
  (checked with a stand-in) unless --require-env; --base-url replaces the document's. Exit 0 valid, 2 invalid.`,
  audit: `usage: asyncjob audit verify [--operation ID] | asyncjob audit show ID   (see "asyncjob audit help")`,
  doctor: `usage: asyncjob doctor [--json]   (see "asyncjob doctor --help")`,
  simulate: `usage: asyncjob simulate [--port N] [--scenario FILE] [--dialect D]   (see "asyncjob simulate --help")`,
  bundle: `usage: asyncjob bundle --out FILE
  Bundles the workflows as a worker does at start (seconds of CPU) and writes the bundle to FILE, stamped with
  this asyncjob version and a hash of its workflow sources; prints the file and its size. A worker given
  ASYNCJOB_WORKFLOW_BUNDLE=FILE starts without bundling, and refuses (exit 2) a file that is not such a bundle or
  was bundled from another version or other sources. Run it at build time, in the install the workers run.
  Exit 0 written, 2 bad command line, 6 the bundling or the write failed.`,
  'replay-check': `usage: asyncjob replay-check [--bundle FILE] [--limit N] [--query Q]
       asyncjob replay-check [--bundle FILE] --history FILE...
  Before an upgrade: replays the histories of the operations running now (up to --limit, default 100, newest
  first: AsyncJobWorkflow executions Running on ASYNCJOB_TASK_QUEUE, and-ed with the visibility query Q) against
  this install's workflows, or the bundle FILE "asyncjob bundle" wrote for it. --history replays history files
  instead (the JSON "temporal workflow show" writes). Prints each history that does not replay (workflow ID, run
  ID, why: nondeterminism or failure), then "replay-check: N histories replayed, F failed".
  Exit 0 every history replays (or none is running), 1 one does not, 2 bad command line, environment, file or
  bundle, 5 Temporal cannot be reached.`,
  keys: `usage: asyncjob keys new --for WHO [--out FILE]
  Makes an Ed25519 key pair for the decider WHO to sign decisions with ("asyncjob help decide"). The secret key is
  written to FILE, else to WHO's key file in ASYNCJOB_DECIDER_KEYS_DIR (default $XDG_CONFIG_HOME/asyncjob/keys or
  ~/.config/asyncjob/keys; the file is named by a hash of WHO), readable by its owner alone (mode 0600); an
  existing file is never overwritten. The secret key is never printed: the public key is, with the lines that list
  it in the deciders section of the policy file the workers read (ASYNCJOB_DECIDER_POLICY).
  Exit 0 written, 2 WHO is not an identity or the file exists or cannot be written.`,
  'codec-server': `usage: asyncjob codec-server [--port N] [--host H]
  Serves the codec endpoint the Temporal Web UI decodes payloads through, with the payload keys of
  ASYNCJOB_PAYLOAD_KEYS: POST /decode and /encode take and answer {"payloads": [...]} (proto3 JSON). Listens on
  H:N (default 127.0.0.1:8888; --port 0 a free port) and prints its URL; serves until SIGINT or SIGTERM. Pages of
  the origins in ASYNCJOB_CODEC_SERVER_ORIGINS may call it (CORS). With ASYNCJOB_CODEC_SERVER_TOKEN (env:NAME or
  file:PATH) every request must send "Authorization: Bearer TOKEN"; without it only a loopback host is served and
  the origin * is refused.
  Exit 0 stopped, 2 bad command line or environment (no keys, an unreadable key or token, the port in use).`,
  // Every variable the worker and its webhook receiver read, from the same list as docs/configuration.md.
  worker: workerHelpText(),
  dev: `usage: asyncjob dev
  Starts the Temporal dev server with its Web UI, a worker and the simulator, and runs a demo operation.`,
  mcp: MCP_USAGE,
  help: `usage: asyncjob help [COMMAND]`,
};

/** The general usage text. */
export const USAGE = `usage: asyncjob <command> [options]

commands:
  start      start an operation (idempotent per operation ID)
  status     show an operation's state
  watch      follow an operation live until it ends or escalates
  result     read an operation's result from the artifact store, verified (stdout or --out FILE)
  cancel     ask for cancellation at the provider
  decide     show an escalation's options, or answer it
  list       list operations by state, provider, escalation reason
  adapter    validate a provider contract, or explain what it will send and read
  audit      verify the audit chain, show an operation's story
  doctor     check the setup (Temporal, store, providers, ports) with a fix per problem
  simulate   run the provider simulator
  worker     run a worker
  bundle     bundle the workflows once, for workers to start without bundling (ASYNCJOB_WORKFLOW_BUNDLE)
  replay-check  before an upgrade: do the running operations' histories replay against this install's workflows?
  keys       make a decider's key pair to sign decisions with (keys new --for WHO)
  codec-server  decode encrypted payloads for the Temporal Web UI (ASYNCJOB_PAYLOAD_KEYS)
  dev        the embedded demo (dev server, Web UI, worker, simulator)
  mcp        serve the agent tools over MCP (stdio or Streamable HTTP), bounded by a policy file
  help       this text, or "asyncjob help COMMAND"

options: --help (every command); --json (stable JSON on stdout; not audit checkpoint, mcp, simulate);
         --verbose (error details; not doctor, audit, mcp, simulate)
exit codes: 0 ok/succeeded, 1 operation ended badly, 2 usage or bad input, 3 refused by the workflow,
            4 operation not found, 5 cannot reach Temporal (or no worker answers), 6 unexpected error,
            7 needs a decision (escalated)
Temporal connection: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_CERT/KEY/CA, TEMPORAL_TLS_SERVER_NAME,
                     TEMPORAL_API_KEY; task queue ASYNCJOB_TASK_QUEUE.
`;

/** The flags of `asyncjob mcp`: the agent tools over MCP (docs/agents.md). */
import { type Flag } from './flag';

/** `asyncjob mcp`. */
export const MCP_FLAGS: readonly Flag[] = [
  {
    name: '--policy',
    usedBy: ['mcp'],
    default: '`$ASYNCJOB_MCP_POLICY`',
    meaning: 'the agent policy file (YAML or JSON)',
    example: '--policy examples/agents/policy.yaml',
  },
  {
    name: '--identity',
    usedBy: ['mcp'],
    default: "the policy's `stdioIdentity`",
    meaning: 'the agent identity over stdio',
    example: '--identity agent:report-bot',
  },
  {
    name: '--http',
    usedBy: ['mcp'],
    default: 'off (stdio)',
    meaning: 'serve Streamable HTTP at `/mcp` instead of stdio; each request names its agent by bearer token',
    example: '--http',
  },
  {
    name: '--host',
    usedBy: ['mcp'],
    default: '`127.0.0.1`',
    meaning: 'the address the HTTP server binds to',
    example: '--host 127.0.0.1',
  },
  {
    name: '--port',
    usedBy: ['mcp'],
    default: '`0` (any free port; the URL is printed on stderr)',
    meaning: 'the port of the HTTP server',
    example: '--port 8765',
  },
];

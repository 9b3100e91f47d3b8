/** The flags `asyncjob`'s commands share (docs/cli.md says which command takes which). */
import { type Flag } from './flag';

/** Flags the commands share: `--help` everywhere, `--json` and `--verbose` where their output has a use. */
export const SHARED_FLAGS: readonly Flag[] = [
  {
    name: '--json',
    usedBy: ['every command but audit checkpoint, mcp, simulate'],
    default: 'off',
    meaning: 'one stable JSON document on stdout (shapes in docs/cli.md)',
    example: 'asyncjob status op-42 --json',
  },
  {
    name: '--verbose',
    usedBy: ['every command but doctor, audit, mcp, simulate'],
    default: 'off',
    meaning: 'error details (stack, causes, every invalid field) on stderr; `-v`',
    example: 'asyncjob start ... --verbose',
  },
  {
    name: '--help',
    usedBy: ['every command'],
    default: '',
    meaning: "the command's usage; `-h`",
    example: 'asyncjob worker --help',
  },
];

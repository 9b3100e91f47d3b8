/** The flags every `asyncjob` command takes. */
import { type Flag } from './flag';

/** Flags every `asyncjob` command takes. */
export const EVERY_COMMAND_FLAGS: readonly Flag[] = [
  {
    name: '--json',
    usedBy: ['every command', 'doctor'],
    default: 'off',
    meaning: 'one stable JSON document on stdout (shapes in docs/cli.md)',
    example: 'asyncjob status op-42 --json',
  },
  {
    name: '--verbose',
    usedBy: ['every command'],
    default: 'off',
    meaning: 'error details (stack, causes, every invalid field) on stderr; `-v`',
    example: 'asyncjob start ... --verbose',
  },
  {
    name: '--help',
    usedBy: ['every command', 'doctor'],
    default: '',
    meaning: "the command's usage; `-h`",
    example: 'asyncjob worker --help',
  },
];

/** What every subcommand of the operator CLI is. */
export interface Io {
  /** A line of the command's result (stdout: safe to pipe). */
  out(line: string): void;
  /** A line for the person at the terminal (stderr). */
  err(line: string): void;
  /** A person can be asked (stdin is a terminal). @default false */
  readonly interactive?: boolean;
  /** Asks the person at the terminal (the question on stderr); resolves to the line typed. */
  ask?(question: string): Promise<string>;
}

export interface Command {
  readonly name: string;
  /** One line for the top-level help. */
  readonly summary: string;
  readonly usage: string;
  /** Runs with the arguments after the command's name; throws UsageError or OperationError. */
  run(argv: readonly string[], io: Io): Promise<void>;
}

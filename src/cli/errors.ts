/** A failure the CLI reports in one line and turns into an exit code. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Wrong command line: exit code 2, like most Unix tools. */
export class UsageError extends CliError {
  override name = 'UsageError';
  constructor(message: string) {
    super(message, 2);
  }
}

/** The server answered with an error envelope. */
export class ApiError extends CliError {
  override name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message, 1);
  }
}

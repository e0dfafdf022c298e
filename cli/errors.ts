/** A refusal the operator can fix; printed without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** A mistake in the command line itself (exit code 2), with the way to the help. */
export const usage = (message: string): CliError => new CliError(`${message}\n(npm run admin -- --help lists the commands and options)`, 2);

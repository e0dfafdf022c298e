import { main } from '../../cli/main.js';

/** What one run of the admin CLI printed, and its exit code. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `npm run admin -- <args>` against the local data in `dataDir`, in this process: `main` with an
 * environment of its own (a process per call cost a second each), its two streams collected.
 */
export const admin = async (dataDir: string, ...args: string[]): Promise<CliResult> => {
  let stdout = '';
  let stderr = '';
  const code = await main(
    args,
    {
      stdout: (line) => {
        stdout += `${line}\n`;
      },
      stderr: (line) => {
        stderr += `${line}\n`;
      },
    },
    { DOERS_DATA_DIR: dataDir },
  );
  return { code, stdout, stderr };
};

/**
 * Long work handed to its worker through SQS (lib/worker.ts makes the queue and the worker that
 * reads it): a message per job, naming it only (`{ workspaceId, jobId }`: what it is to do is on
 * the job's item). The SQS client is loaded on the first hand-over, so a call that starts no long
 * work loads nothing of it.
 */
export interface QueuedJob {
  readonly workspaceId: string;
  readonly jobId: string;
}

export const sqsWorkQueue = (queueUrl: string, region: string | undefined) => {
  let client: Promise<{ send: (job: QueuedJob) => Promise<void> }> | undefined;
  const load = () =>
    (client ??= import('@aws-sdk/client-sqs').then(({ SQSClient, SendMessageCommand }) => {
      const sqs = new SQSClient({ region });
      return {
        send: async (job: QueuedJob) => {
          await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(job) }));
        },
      };
    }));
  return {
    start: async (job: QueuedJob): Promise<void> => (await load()).send(job),
  };
};

/** A message's job, or undefined when the body is not one (it is dropped: nothing could ever run it). */
export const queuedJobOf = (body: string): QueuedJob | undefined => {
  try {
    const v = JSON.parse(body) as Partial<QueuedJob>;
    return typeof v.workspaceId === 'string' && typeof v.jobId === 'string' ? { workspaceId: v.workspaceId, jobId: v.jobId } : undefined;
  } catch {
    return undefined;
  }
};

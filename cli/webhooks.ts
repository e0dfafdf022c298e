import type { SendOutcome } from '../lambda/delivery/webhook-sender.js';
import { ToolRefusal } from '../lambda/errors.js';
import { doorSource } from '../lambda/workspace/activity/records.js';
import { OPERATOR } from '../lambda/workspace/membership/rules.js';
import { callerOf } from '../lambda/workspace/model/caller.js';
import type { WriteContext } from '../lambda/workspace/store/stores.js';
import { createWebhookDispatch } from '../lambda/workspace/webhooks/webhook-dispatch.js';
import { addWebhook, listWebhooks, removeWebhook, testWebhook } from '../lambda/workspace/webhooks/webhook-writer.js';
import { type Command, existingWorkspace, required, workspaceOf } from './args.js';
import { CliError, usage } from './errors.js';
import type { Target } from './target.js';

/**
 * A workspace's outbound webhooks (docs/notifications.md, "Webhooks"): added (the secret shown once),
 * listed (secrets masked, with each one's failures), removed, tested with a signed delivery. The
 * operator acts as an owner through the webhook writer, so its rules and refusals are the ones
 * every door gets. Loopback receivers are allowed only against the local server's data.
 */

/** Where the local server's receivers may live on this machine; a deployed stack's never do. */
const allowLoopback = (target: Target): boolean => target.where.startsWith('local');

const contextOf = async (target: Target, workspace: string | undefined, action: string, now: Date): Promise<WriteContext> => {
  const ws = await existingWorkspace(target, workspaceOf(workspace, target));
  return { stores: target, caller: callerOf(ws, OPERATOR), source: doorSource('admin CLI', OPERATOR, action, now) };
};

/** The workspace's refusals name their argument (`url: …`): the CLI's option of that name. */
const asOption = async <T>(run: () => Promise<T>): Promise<T> => {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ToolRefusal) throw new CliError(`--${err.message}`);
    throw err;
  }
};

const idOf = (value: string | undefined): string => {
  const id = required(value, 'id');
  if (!/^hook_[0-9a-f]{1,64}$/.test(id)) throw usage(`--id: "${id}" is not a webhook id (webhook list shows them)`);
  return id;
};

const webhookAdd: Command = {
  options: ['workspace', 'url', 'events', 'format'],
  async run(o, target, out, now) {
    const url = required(o.url, 'url');
    const ctx = await contextOf(target, o.workspace, 'webhook add', now);
    const { webhook } = await asOption(() =>
      addWebhook(ctx, { url, events: o.events?.split(','), format: o.format }, { allowLoopback: allowLoopback(target) }),
    );
    out.stderr(
      `Webhook ${webhook.webhookId} to ${webhook.url}, events ${webhook.events.join(',')}, format ${webhook.format}. ` +
        'Its signing secret below is shown once (webhook list masks it); receivers verify each delivery with it:',
    );
    out.stdout(webhook.secret);
  },
};

const webhookList: Command = {
  options: ['workspace'],
  async run(o, target, out, now) {
    const ctx = await contextOf(target, o.workspace, 'webhook list', now);
    const webhooks = await listWebhooks(target, ctx.caller);
    if (!webhooks.length) out.stderr(`No webhooks in ${ctx.caller.workspaceId}.`);
    for (const w of webhooks) {
      const f = w.lastFailure;
      out.stdout(
        [
          w.webhookId,
          w.url,
          w.events.join(','),
          w.format,
          w.secret,
          `created ${w.createdAt}`,
          `failed deliveries ${w.failedDeliveries ?? 0}`,
          f ? `last failure ${f.at} ${f.cause}${f.status !== undefined ? ` ${f.status}` : ''}` : 'no failure',
        ].join('\t'),
      );
    }
  },
};

const webhookRemove: Command = {
  options: ['workspace', 'id'],
  async run(o, target, out, now) {
    const id = idOf(o.id);
    const ctx = await contextOf(target, o.workspace, 'webhook remove', now);
    const { webhook } = await asOption(() => removeWebhook(ctx, id));
    out.stdout(`Removed webhook ${webhook.webhookId} (${webhook.url}); deliveries still waiting for it are dropped.`);
  },
};

const said = (outcome: Exclude<SendOutcome, { ok: true }>): string =>
  `${outcome.cause}${outcome.status !== undefined ? ` (HTTP ${outcome.status})` : ''}${outcome.addressClass ? ` (a ${outcome.addressClass} address)` : ''}`;

const webhookTest: Command = {
  options: ['workspace', 'id'],
  async run(o, target, out, now) {
    const id = idOf(o.id);
    const ctx = await contextOf(target, o.workspace, 'webhook test', now);
    const dispatch = createWebhookDispatch({ db: target.db, table: target.table, allowLoopback: allowLoopback(target) });
    const outcome = await asOption(() => testWebhook(ctx.caller, dispatch, id, now));
    if (!outcome.ok) throw new CliError(`webhook ${id}: the test delivery failed: ${said(outcome)}`);
    out.stdout(`Delivered: webhook ${id} answered HTTP ${outcome.status} to a signed test delivery (type webhook.test).`);
  },
};

export const WEBHOOK_COMMANDS: Readonly<Record<string, Command>> = {
  'webhook add': webhookAdd,
  'webhook list': webhookList,
  'webhook remove': webhookRemove,
  'webhook test': webhookTest,
};

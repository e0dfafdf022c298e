import { type InputRequired, inputRequired, type ToolContext } from '../../mcp/tool-registry.js';
import type { RequestMeta } from '../../mcp/types.js';
import { answeredAnotherState } from '../model/refusals.js';
import type { WorkspaceServices } from './services.js';

/**
 * Confirmation before a change that destroys or takes something away, through the 2026-07-28
 * multi round-trip pattern: the first call answers `input_required` with one form elicitation
 * that says exactly what will happen; the retry carries the person's answer and the signed state
 * (bound by the dispatcher to the tool and its arguments) naming the target and its version, so an
 * answer to a question about another state of the target changes nothing. Clients that cannot show
 * a form, and the earlier revisions, act at once (docs/workspace.md, "Confirmation").
 */

const KEY = 'confirm';

/** Form elicitation is declared: `elicitation.form`, or an `elicitation` naming no mode (the 2025 default). */
export const canAskForm = (meta: RequestMeta): boolean => {
  if (!meta.era.modern) return false;
  const e = meta.clientCapabilities.elicitation;
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return false;
  const modes = e as Record<string, unknown>;
  return modes.form !== undefined || (modes.form === undefined && modes.url === undefined);
};

/** What the question is about: a later retry is answered only for this same state. */
export interface ConfirmTarget {
  readonly id: string;
  /** The target's version, or any other text naming its exact state. */
  readonly state: string;
}

/** What the person answered when it was not yes: declined, cancelled, or accepted without ticking the box. */
export type NotConfirmed = 'declined' | 'cancelled' | 'unticked';
export const NOT_CONFIRMED = ['declined', 'cancelled', 'unticked'] as const;

/** A question beside the yes: one of `options`, offered with `proposed` chosen. */
export interface Choice {
  readonly title: string;
  readonly options: readonly string[];
  readonly proposed: string;
}

export type Confirmation =
  | { readonly kind: 'proceed'; readonly chosen?: Readonly<Record<string, string>> }
  | { readonly kind: 'ask'; readonly request: InputRequired }
  | { readonly kind: NotConfirmed };

const isTarget = (v: unknown): v is ConfirmTarget =>
  typeof v === 'object' && v !== null && typeof (v as ConfirmTarget).id === 'string' && typeof (v as ConfirmTarget).state === 'string';

/**
 * Decides whether to act now, ask, or report that the person said no. `message` is what the person
 * reads; `button` labels the one boolean field they tick to confirm.
 */
export const confirmation = (
  ctx: Pick<ToolContext<WorkspaceServices>, 'meta' | 'input'>,
  target: ConfirmTarget,
  message: string,
  button: string,
  choices: Readonly<Record<string, Choice>> = {},
): Confirmation => {
  if (!canAskForm(ctx.meta)) return { kind: 'proceed' };
  const answer = ctx.input?.responses[KEY] as { action?: unknown; content?: { confirm?: unknown } } | undefined;
  const asked = ctx.input?.state;
  if (answer === undefined || !isTarget(asked)) {
    return {
      kind: 'ask',
      request: inputRequired(
        {
          [KEY]: {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message,
              requestedSchema: {
                type: 'object',
                properties: {
                  ...Object.fromEntries(
                    Object.entries(choices).map(([k, c]) => [
                      k,
                      { type: 'string', title: c.title, enum: [...c.options], default: c.proposed },
                    ]),
                  ),
                  confirm: { type: 'boolean', title: button, default: false },
                },
                required: ['confirm'],
              },
            },
          },
        },
        target,
      ),
    };
  }
  if (asked.id !== target.id || asked.state !== target.state) throw answeredAnotherState();
  if (answer.action === 'accept') {
    if (answer.content?.confirm !== true) return { kind: 'unticked' };
    // An answer outside the options is the proposed one: the form offered nothing else.
    const content = answer.content as Record<string, unknown>;
    const chosen = Object.fromEntries(
      Object.entries(choices).map(([k, c]) => [
        k,
        typeof content[k] === 'string' && c.options.includes(content[k]) ? content[k] : c.proposed,
      ]),
    );
    return { kind: 'proceed', ...(Object.keys(chosen).length ? { chosen } : {}) };
  }
  return { kind: answer.action === 'cancel' ? 'cancelled' : 'declined' };
};

/** The text of a result the person did not confirm: an ordinary result, not an error. */
export const notConfirmedText = (kind: NotConfirmed, what: string): string =>
  kind === 'unticked'
    ? `Nothing was changed: the person accepted the question about ${what} without ticking its box, which is not a yes.`
    : `Nothing was changed: the person ${kind === 'declined' ? 'declined' : 'cancelled'} ${what}.`;

/**
 * What a destructive tool's description says about asking, truthfully for every client: this
 * server asks the person itself only on 2026-07-28 with form elicitation; elsewhere the model must.
 */
export const ASKS_FIRST = 'Asks first (elicitation), else confirm with the person.';

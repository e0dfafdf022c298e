import { type Html, html } from '../../pages/html.js';
import { type Page, page } from '../../pages/layout.js';
import { SCOPE_DESCRIPTIONS } from '../../pages/scope-descriptions.js';

export const TOKEN_EXPIRY_DAYS = [7, 30, 90, 365] as const;

export interface TokenRow {
  readonly tokenId: string;
  readonly label: string;
  readonly scopes: readonly string[];
  readonly createdAt: string;
  readonly expiresAt?: string;
  readonly lastUsedAt?: string;
  readonly expired: boolean;
}

export interface AppRow {
  readonly grantId: string;
  readonly name: string;
  /** A metadata-document client's host; undefined for a registered client (unverified). */
  readonly verifiedDomain: string | undefined;
  readonly scopes: readonly string[];
  readonly createdAt: string;
  readonly lastUsedAt?: string;
}

export interface MemberRow {
  readonly userId: string;
  readonly name: string;
  readonly email: string;
  readonly role: string;
  readonly status: string;
  /** Whether this viewer may disable or enable this member (the rules of member-status.ts). */
  readonly changeable: boolean;
}

/** A webhook as an admin sees it here: the secret masked (webhook-writer.ts, `listWebhooks`). */
export interface WebhookRow {
  readonly webhookId: string;
  readonly url: string;
  /** Every inbox kind, or the ones chosen. */
  readonly events: readonly string[] | 'all';
  readonly format: string;
  readonly maskedSecret: string;
  readonly createdAt: string;
  /** Who added it, by name where the member is known. */
  readonly createdBy: string;
  readonly lastFailure?: { readonly at: string; readonly cause: string; readonly status?: number };
  readonly failedDeliveries: number;
}

/** The webhooks section: only for admins and owners. */
export interface WebhooksView {
  readonly rows: readonly WebhookRow[];
  /** The inbox kinds a webhook may be sent (delivery/notice.ts), and the formats (store/webhook-store.ts). */
  readonly kinds: readonly string[];
  readonly formats: readonly string[];
  /** A webhook just added: its secret is on this one page, never again. */
  readonly created?: { readonly url: string; readonly secret: string };
  /** A refused form: what was wrong, the field it names, and what was entered (to correct it). */
  readonly refused?: {
    readonly text: string;
    readonly field?: 'url' | 'events' | 'format';
    readonly url: string;
    readonly events: readonly string[];
    readonly format: string;
  };
}

/** One change of the activity record, as the page shows it. */
export interface ChangeRow {
  readonly activityId: string;
  readonly when: string;
  readonly who: string;
  readonly client: string;
  readonly summary: string;
}

const changesTable = (id: string, rows: readonly ChangeRow[], withWho: boolean): Html | string =>
  rows.length
    ? html`<table class="stack" id="${id}"><thead><tr><th scope="col">When</th>${withWho ? html`<th scope="col">Who</th>` : ''}<th scope="col">Through</th><th scope="col">What</th><th scope="col">Id</th></tr></thead><tbody>
${rows.map(
  (r) =>
    html`<tr><td data-label="When">${r.when}</td>${withWho ? html`<td data-label="Who">${r.who}</td>` : ''}<td data-label="Through">${r.client}</td><td data-label="What">${r.summary}</td><td data-label="Id"><code>${r.activityId}</code></td></tr>
`,
)}</tbody></table>`
    : html`<p class="muted" id="${id}">None in the last days kept.</p>`;

export interface AccountView {
  readonly csrf: string;
  readonly me: { readonly name: string; readonly email: string; readonly role: string };
  readonly workspaceName: string;
  readonly mcpUrl: string;
  readonly tokens: readonly TokenRow[];
  readonly grantableScopes: readonly string[];
  readonly apps: readonly AppRow[];
  /** Only for admins and owners. */
  readonly members?: readonly MemberRow[];
  /** The person's own recent changes, through any door, newest first. */
  readonly myChanges: readonly ChangeRow[];
  /** Only for admins and owners: the workspace's member and token changes. */
  readonly teamChanges?: readonly ChangeRow[];
  /** Only for admins and owners: the workspace's outbound webhooks (docs/notifications.md, "Webhooks"). */
  readonly webhooks?: WebhooksView;
  /** A token just made: its secret is on this one page, never again. */
  readonly created?: { readonly label: string; readonly secret: string };
  readonly notice?: string;
  readonly error?: string;
}

const day = (iso: string | undefined): string => (iso ? iso.slice(0, 10) : '—');

const scopeList = (scopes: readonly string[]): Html | string => (scopes.length ? scopes.join(', ') : 'none (who am I only)');

/** Reveals the copy buttons and copies on click; without it, the fields are there to select. */
const COPY_SCRIPT = `document.querySelectorAll('button[data-copy]').forEach(function (b) {
  b.hidden = false;
  b.addEventListener('click', function () {
    var field = document.getElementById(b.getAttribute('data-copy'));
    navigator.clipboard.writeText(field.value).then(function () { b.textContent = 'Copied'; }, function () { field.select(); });
  });
});`;

const post = (action: string, csrf: string, label: string, attrs: { readonly id?: string; readonly name?: string } = {}): Html =>
  html`<form method="post" action="${action}"><input type="hidden" name="csrf" value="${csrf}"><button type="submit"${attrs.id ? html` id="${attrs.id}"` : ''}${attrs.name ? html` aria-label="${label} ${attrs.name}"` : ''}>${label}</button></form>`;

const FIELD_NAMES = { url: 'URL', events: 'Events', format: 'Format' } as const;

const webhookRow = (w: WebhookRow, csrf: string): Html => {
  const f = w.lastFailure;
  return html`<tr data-webhook="${w.webhookId}"><td data-label="URL"><code>${w.url}</code></td><td data-label="Events">${w.events === 'all' ? 'all' : w.events.join(', ')}</td><td data-label="Format">${w.format}</td><td data-label="Secret"><code>${w.maskedSecret}</code></td><td data-label="Added">${day(w.createdAt)} <span class="muted">by ${w.createdBy}</span></td><td data-label="Failures">${
    f || w.failedDeliveries
      ? html`${f ? `last ${f.at.slice(0, 16).replace('T', ' ')} UTC: ${f.cause}${f.status !== undefined ? ` (HTTP ${f.status})` : ''}` : ''}${f && w.failedDeliveries ? '; ' : ''}${w.failedDeliveries ? `${w.failedDeliveries} ${w.failedDeliveries === 1 ? 'delivery' : 'deliveries'} given up` : ''}`
      : 'none'
  }</td><td>${post(`/account/webhooks/${encodeURIComponent(w.webhookId)}/remove`, csrf, 'Remove', { name: w.url })}</td></tr>
`;
};

/** The webhooks section: the list, what was just added or refused, and the form to add one. */
const webhooksSection = (v: WebhooksView, csrf: string): Html => {
  const r = v.refused;
  const invalid = (field: 'url' | 'events' | 'format') =>
    r?.field === field ? html` aria-invalid="true" aria-describedby="webhook-error"` : '';
  const checked = (kind: string) => (r?.events.includes(kind) ? ' checked' : '');
  return html`<section aria-labelledby="webhooks-heading" id="webhooks-section">
<h2 id="webhooks-heading">Webhooks</h2>
<p class="muted">The workspace's events posted to your own systems, each delivery signed with the webhook's secret (<code>whsec_…</code>). Only admins and owners see this.</p>
${
  v.created
    ? html`<div class="secret" id="webhook-created">
<h3>Webhook to ${v.created.url} added</h3>
<p>Store its signing secret now, where your receiver verifies deliveries: it is shown only this once, and this page shows it masked from now on.</p>
<label class="field"><span>Signing secret</span><textarea id="webhook-secret" readonly rows="2">${v.created.secret}</textarea></label>
<button type="button" data-copy="webhook-secret" hidden>Copy secret</button>
</div>`
    : ''
}
${
  v.rows.length
    ? html`<table class="stack" id="webhooks"><thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Format</th><th scope="col">Secret</th><th scope="col">Added</th><th scope="col">Failures</th><th scope="col"><span class="muted">Action</span></th></tr></thead><tbody>
${v.rows.map((w) => webhookRow(w, csrf))}</tbody></table>`
    : html`<p id="no-webhooks">The workspace has no webhooks.</p>`
}
<form method="post" action="/account/webhooks" id="add-webhook">
<input type="hidden" name="csrf" value="${csrf}">
<h3>New webhook</h3>
${r ? html`<p class="notice" role="alert" id="webhook-error">The webhook was not added. ${r.field ? html`<strong>${FIELD_NAMES[r.field]}</strong>: ` : ''}${r.text}</p>` : ''}
<label class="field"><span>URL</span><input type="text" inputmode="url" name="url" id="webhook-url" required maxlength="2048" placeholder="https://hooks.example.com/doers" value="${r?.url ?? ''}"${invalid('url')}></label>
<fieldset${invalid('events')}><legend>Events <span class="muted">(none ticked: all)</span></legend>
${v.kinds.map(
  (k) => html`<label><input type="checkbox" name="event" value="${k}"${checked(k)}> <span>${k}</span></label>
`,
)}</fieldset>
<label class="field"><span>Format</span><select name="format" id="webhook-format"${invalid('format')}>${v.formats.map(
    (f) =>
      html`<option value="${f}"${(r?.format ?? 'standard') === f ? ' selected' : ''}>${f === 'slack' ? 'Slack message' : 'standard (JSON)'}</option>`,
  )}</select></label>
<button type="submit" class="primary" id="add-webhook-button">Add webhook</button>
</form>
</section>`;
};

/**
 * The account page: who you are, your personal access tokens, the apps connected to your account
 * and, for admins and owners, the workspace's members and webhooks. Every action is a form post with the
 * session's CSRF token; the page works without JavaScript (the copy button is the only script).
 */
export const accountPage = (v: AccountView): Page =>
  page(
    { title: 'Your account', wide: true, ...(v.created || v.webhooks?.created ? { script: COPY_SCRIPT } : {}) },
    html`<header class="account">
<div><h1>Your account</h1>
<p id="who">${v.me.name} &lt;${v.me.email}&gt; · <span id="role">${v.me.role}</span> of <span id="workspace">${v.workspaceName}</span></p></div>
${post('/account/sign-out', v.csrf, 'Sign out', { id: 'sign-out' })}
</header>
${v.notice ? html`<p class="done" role="status" id="notice">${v.notice}</p>` : ''}
${v.error ? html`<p class="notice" role="alert" id="error">${v.error}</p>` : ''}
${
  v.created
    ? html`<div class="secret" id="created">
<h2>Token “${v.created.label}” created</h2>
<p>Copy it now: it is shown only this once, and doers keeps only a hash of it.</p>
<label class="field"><span>Token</span><textarea id="secret" readonly rows="2">${v.created.secret}</textarea></label>
<button type="button" data-copy="secret" hidden>Copy token</button>
<label class="field"><span>Add it to Claude Code</span><textarea id="command" readonly rows="3">claude mcp add --transport http doers ${v.mcpUrl} --header "Authorization: Bearer ${v.created.secret}"</textarea></label>
<button type="button" data-copy="command" hidden>Copy command</button>
</div>`
    : ''
}
<section aria-labelledby="tokens-heading">
<h2 id="tokens-heading">Personal access tokens</h2>
<p class="muted">For Claude Code, Cursor, scripts and any client that takes a bearer token.</p>
${
  v.tokens.length
    ? html`<table class="stack" id="tokens"><thead><tr><th scope="col">Label</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="muted">Action</span></th></tr></thead><tbody>
${v.tokens.map(
  (
    t,
  ) => html`<tr data-token="${t.tokenId}"><td data-label="Label">${t.label}</td><td data-label="Scopes">${scopeList(t.scopes)}</td><td data-label="Created">${day(t.createdAt)}</td><td data-label="Expires">${t.expired ? 'expired' : t.expiresAt ? day(t.expiresAt) : 'never'}</td><td data-label="Last used">${day(t.lastUsedAt)}</td><td>${post(`/account/tokens/${encodeURIComponent(t.tokenId)}/revoke`, v.csrf, 'Revoke', { name: t.label })}</td></tr>
`,
)}</tbody></table>`
    : html`<p id="no-tokens">You have no personal access tokens.</p>`
}
<form method="post" action="/account/tokens" id="create-token">
<input type="hidden" name="csrf" value="${v.csrf}">
<h3>New token</h3>
<label class="field"><span>Label</span><input type="text" name="label" id="label" required maxlength="100" placeholder="e.g. Claude Code on my laptop"></label>
<fieldset><legend>Scopes</legend>
${v.grantableScopes.map(
  (
    s,
  ) => html`<label><input type="checkbox" name="scope" value="${s}"${s.endsWith(':read') ? ' checked' : ''}> <span>${SCOPE_DESCRIPTIONS[s] ?? s} <span class="muted">(${s})</span></span></label>
`,
)}</fieldset>
<label class="field"><span>Expires after</span><select name="days" id="days">${TOKEN_EXPIRY_DAYS.map((d) => html`<option value="${d}"${d === 30 ? ' selected' : ''}>${d} days</option>`)}</select></label>
<button type="submit" class="primary" id="create">Create token</button>
</form>
</section>
<section aria-labelledby="apps-heading">
<h2 id="apps-heading">Connected apps</h2>
<p class="muted">Assistants you allowed through sign-in (claude.ai, ChatGPT, Claude Code, …). Revoking one stops it at its next call.</p>
${
  v.apps.length
    ? html`<table class="stack" id="apps"><thead><tr><th scope="col">App</th><th scope="col">Scopes</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col"><span class="muted">Action</span></th></tr></thead><tbody>
${v.apps.map(
  (
    a,
  ) => html`<tr data-grant="${a.grantId}"><td data-label="App">${a.name} ${a.verifiedDomain ? html`<span class="muted">${a.verifiedDomain}</span>` : html`<span class="badge">unverified</span>`}</td><td data-label="Scopes">${scopeList(a.scopes)}</td><td data-label="Connected">${day(a.createdAt)}</td><td data-label="Last used">${day(a.lastUsedAt)}</td><td>${post(`/account/apps/${encodeURIComponent(a.grantId)}/revoke`, v.csrf, 'Revoke', { name: a.name })}</td></tr>
`,
)}</tbody></table>`
    : html`<p id="no-apps">No apps are connected to your account.</p>`
}
</section>
<section aria-labelledby="changes-heading">
<h2 id="changes-heading">Your recent changes</h2>
<p class="muted">Everything you changed, through any assistant or this page; an assistant can undo one with change_undo and its id.</p>
${changesTable('my-changes', v.myChanges, false)}
</section>
${
  v.teamChanges
    ? html`<section aria-labelledby="team-changes-heading">
<h2 id="team-changes-heading">Member and token changes</h2>
${changesTable('team-changes', v.teamChanges, true)}
</section>`
    : ''
}
${
  v.members
    ? html`<section aria-labelledby="members-heading">
<h2 id="members-heading">Members of ${v.workspaceName}</h2>
<table class="stack" id="members"><thead><tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col"><span class="muted">Action</span></th></tr></thead><tbody>
${v.members.map(
  (
    m,
  ) => html`<tr data-member="${m.userId}"><td data-label="Name">${m.name}</td><td data-label="E-mail">${m.email}</td><td data-label="Role">${m.role}</td><td data-label="Status">${m.status}</td><td>${
    m.changeable
      ? post(
          `/account/members/${encodeURIComponent(m.userId)}/${m.status === 'active' ? 'disable' : 'enable'}`,
          v.csrf,
          m.status === 'active' ? 'Disable' : 'Enable',
          { name: m.name },
        )
      : ''
  }</td></tr>
`,
)}</tbody></table>
</section>`
    : ''
}
${v.webhooks ? webhooksSection(v.webhooks, v.csrf) : ''}`,
  );

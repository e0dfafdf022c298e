/**
 * The mail a local SES API was sent (lambda/local/embedded-ses.ts): aws-ses-v2-local keeps it in
 * memory and lists it at `/store`, oldest first.
 */
export interface SentMail {
  /** The recipients, joined by `, ` (the e-mail sender sends each mail to one). */
  readonly to: string;
  readonly from: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

interface StoredEmail {
  readonly from: string;
  readonly destination: { readonly to: readonly string[] };
  readonly subject: string;
  readonly body: { readonly text?: string; readonly html?: string };
}

/** Every mail the local SES at `sesUrl` was sent, or only those to `opts.to`. */
export const sentMails = async (sesUrl: string, opts: { readonly to?: string } = {}): Promise<SentMail[]> => {
  const res = await fetch(new URL('/store', sesUrl));
  if (!res.ok) throw new Error(`The local SES answered ${res.status} for its store`);
  const { emails } = (await res.json()) as { emails: StoredEmail[] };
  return emails
    .map((e) => ({ to: e.destination.to.join(', '), from: e.from, subject: e.subject, text: e.body.text ?? '', html: e.body.html ?? '' }))
    .filter((m) => opts.to === undefined || m.to === opts.to);
};

import { bytesNotText, typeIsNotBytes } from '../model/refusals.js';

/**
 * What an attachment is, read from its bytes, never taken from the caller's word alone: a known
 * binary type (the file sniffer), else text when the bytes are text, else octet-stream. The one rule,
 * which the attachment writer applies for every door.
 */

/** The text types a caller may declare for text it gives. */
export const TEXT_TYPES = ['text/plain', 'text/markdown', 'text/csv', 'application/json'] as const;
export type TextType = (typeof TEXT_TYPES)[number];

/** UTF-8 without NUL or other control characters than tab, line feed and carriage return. */
export const isText = (bytes: Uint8Array): boolean => {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return false;
  }
  return !/(?![\t\n\r])\p{Cc}/u.test(text);
};

/**
 * What the bytes are: a known binary type, else text (declared or plain) when they are text, else
 * octet-stream. Bytes given as text, or declared a text type, that are not text are refused (naming
 * `text` or `type`), as is a declared text type the bytes are a binary of.
 */
export const typeOf = async (
  sniff: (bytes: Uint8Array) => Promise<string | undefined>,
  bytes: Uint8Array,
  givenAsText: boolean,
  declared: TextType | undefined,
): Promise<string> => {
  const sniffed = givenAsText ? undefined : await sniff(bytes);
  if (sniffed) {
    if (declared) throw typeIsNotBytes(declared, sniffed);
    return sniffed;
  }
  if (isText(bytes)) return declared ?? 'text/plain';
  if (declared || givenAsText) throw bytesNotText(declared ? 'type' : 'text');
  return 'application/octet-stream';
};

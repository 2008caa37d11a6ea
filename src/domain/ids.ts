const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 16 base62 characters: about 95 random bits, plenty for ids that must not collide. */
const ID_LENGTH = 16;

/** An opaque id such as `agt_3fK9...`: a readable kind prefix plus random base62. */
export function newId(prefix: string): string {
  let out = prefix + '_';
  while (out.length < prefix.length + 1 + ID_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(ID_LENGTH * 2))) {
      // 248 = 4 * 62: rejecting the rest keeps every character equally likely.
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === prefix.length + 1 + ID_LENGTH) break;
    }
  }
  return out;
}

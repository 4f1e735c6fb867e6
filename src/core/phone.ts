import { parsePhoneNumberFromString } from "libphonenumber-js/max";

/**
 * Phone numbers in international E.164 form: a plus, the country calling code
 * and the national number with no trunk zero after the country code
 * (`+442079460000`, not `+4402079460000`), and a number that exists in that
 * country's numbering plan. Anything else is refused rather than repaired, so
 * one number never has two spellings.
 */
export function isE164(value: string): boolean {
  if (!/^\+[1-9]\d{6,14}$/.test(value)) return false;
  const parsed = parsePhoneNumberFromString(value);
  return parsed?.isValid() === true && parsed.number === value;
}

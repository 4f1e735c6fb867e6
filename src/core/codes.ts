import { iso6393 } from "iso-639-3";
import { iso31661, iso31662 } from "iso-3166";

/** ISO code lists: languages (639-3), countries (3166-1 alpha-2) and their subdivisions (3166-2). */

const LANGUAGES = new Set(iso6393.map((language) => language.iso6393));
const COUNTRIES = new Set(iso31661.map((country) => country.alpha2));
const SUBDIVISIONS = new Set(iso31662.map((subdivision) => subdivision.code));
const COUNTRIES_WITH_SUBDIVISIONS = new Set(iso31662.map((subdivision) => subdivision.code.split("-")[0]));

/** The ISO 639-3 code in canonical (lower) case, or null when there is no such language. */
export function languageCode(value: string): string | null {
  const code = value.trim().toLowerCase();
  return LANGUAGES.has(code) ? code : null;
}

/** The ISO 3166-1 alpha-2 code in canonical (upper) case, or null. */
export function countryCode(value: string): string | null {
  const code = value.trim().toUpperCase();
  return COUNTRIES.has(code) ? code : null;
}

export const hasSubdivisions = (country: string): boolean => COUNTRIES_WITH_SUBDIVISIONS.has(country);

/**
 * The full ISO 3166-2 code (`US-CA`) of a subdivision of the country, given in
 * full or by its part after the dash (`CA`); null when the country has no such
 * subdivision.
 */
export function subdivisionCode(country: string, value: string): string | null {
  const given = value.trim().toUpperCase();
  const code = given.includes("-") ? given : `${country}-${given}`;
  return code.startsWith(`${country}-`) && SUBDIVISIONS.has(code) ? code : null;
}

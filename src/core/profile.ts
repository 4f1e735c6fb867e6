import { countryCode, hasSubdivisions, languageCode, subdivisionCode } from "./codes.js";
import type { ErrorEntry } from "./errors.js";
import { isE164 } from "./phone.js";

/** The rules for the fields of a person's profile (API.md Limits, AddProfile, UpdateProfile). */

export const LIMITS = {
  name: { min: 1, max: 40 },
  screenName: { min: 3, max: 40 },
  password: { min: 8, max: 200 },
  street: 80,
  city: 40,
  divisionCode: 20,
  zipCode: 16,
  company: 100,
  email: 254,
} as const;

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;
/** Letters (any script), digits, space, and . _ - ' inside. */
const SCREEN_NAME = /^[\p{L}\p{N}](?:[\p{L}\p{N} ._'-]*[\p{L}\p{N}])?$/u;

type Check = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly error: ErrorEntry };

const invalid = (field: string, message: string): Check => ({
  ok: false,
  error: { name: "InvalidValue", field, message },
});

export function checkName(field: string, value: string): Check {
  const trimmed = value.trim();
  if (trimmed.length < LIMITS.name.min || trimmed.length > LIMITS.name.max) {
    return invalid(field, `${field} must be ${LIMITS.name.min} to ${LIMITS.name.max} characters`);
  }
  return { ok: true, value: trimmed };
}

export function checkScreenName(value: string): Check {
  const trimmed = value.trim();
  if (trimmed.length < LIMITS.screenName.min || trimmed.length > LIMITS.screenName.max) {
    return invalid("ScreenName", `ScreenName must be ${LIMITS.screenName.min} to ${LIMITS.screenName.max} characters`);
  }
  if (!SCREEN_NAME.test(trimmed)) {
    return invalid("ScreenName", "ScreenName may hold letters, digits, spaces and . _ - ' between them");
  }
  return { ok: true, value: trimmed };
}

export function checkEmail(value: string): Check {
  const email = value.trim().toLowerCase();
  if (email.length > LIMITS.email || !EMAIL.test(email)) return invalid("Email", `Not an email address: ${value}`);
  return { ok: true, value: email };
}

export function checkPassword(value: string): Check {
  if (value.length < LIMITS.password.min || value.length > LIMITS.password.max) {
    return invalid("Password", `Password must be ${LIMITS.password.min} to ${LIMITS.password.max} characters`);
  }
  return { ok: true, value };
}

export function checkLanguage(value: string): Check {
  const code = languageCode(value);
  return code ? { ok: true, value: code } : invalid("Language", `Not an ISO 639-3 language code: ${value}`);
}

export function checkCountry(value: string, field = "CountryCode"): Check {
  const code = countryCode(value);
  return code ? { ok: true, value: code } : invalid(field, `Not an ISO 3166-1 alpha-2 country code: ${value}`);
}

/** A subdivision of the country; absent is allowed only for countries without subdivisions. */
export function checkDivision(country: string, value: string | undefined): Check | { ok: true; value: null } {
  if (value === undefined || value.trim() === "") {
    return hasSubdivisions(country)
      ? {
          ok: false,
          error: { name: "MissingValue", field: "DivisionCode", message: `DivisionCode is required for ${country}` },
        }
      : { ok: true, value: null };
  }
  if (value.length > LIMITS.divisionCode) {
    return invalid("DivisionCode", `DivisionCode must be at most ${LIMITS.divisionCode} characters`);
  }
  const code = subdivisionCode(country, value);
  return code
    ? { ok: true, value: code }
    : invalid("DivisionCode", `${value} is not an ISO 3166-2 subdivision of ${country}`);
}

export function checkPhone(value: string, field = "Phone"): Check {
  return isE164(value)
    ? { ok: true, value }
    : invalid(
        field,
        `${field} must be an international number such as +14155552671 (a plus, the country code, no leading zero)`,
      );
}

/** An optional free-text field with a maximum length; empty means "clear". */
export function checkText(field: string, value: string, max: number): Check {
  const trimmed = value.trim();
  return trimmed.length > max
    ? invalid(field, `${field} must be at most ${max} characters`)
    : { ok: true, value: trimmed };
}

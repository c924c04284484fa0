import { FieldErrorCollector } from '../shared/domain-error';
import { MaskTemplate, TokenType } from './token';

/**
 * What each token type brings (the platform's token types): how its data is validated, and the container, fingerprint
 * expression and mask it gets when the create names none. Validation messages never quote the value.
 */
export interface TokenTypeDefinition {
  validate(data: unknown, field: string, errors: FieldErrorCollector): void;
  defaultContainer: string;
  defaultFingerprintExpression: string;
  defaultMask: MaskTemplate | null;
}

const DIGITS = /^[0-9]+$/;
const REVEAL_LAST_4 = '{{ data | reveal_last: 4 }}';

export function isLuhnValid(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The ABA routing number checksum: 3(d1+d4+d7) + 7(d2+d5+d8) + (d3+d6+d9) is a multiple of 10. */
export function isAbaRoutingNumber(value: string): boolean {
  if (!/^[0-9]{9}$/.test(value)) return false;
  const d = [...value].map(Number);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0;
}

function stringOf(data: unknown, field: string, errors: FieldErrorCollector): string | undefined {
  if (typeof data === 'string') return data;
  errors.add(field, 'must be a string');
  return undefined;
}

function cardNumber(value: unknown, field: string, errors: FieldErrorCollector): void {
  const number = stringOf(value, field, errors);
  if (number === undefined) return;
  if (!DIGITS.test(number) || number.length < 13 || number.length > 19) errors.add(field, 'must be 13 to 19 digits');
  else if (!isLuhnValid(number)) errors.add(field, 'must be a valid card number (Luhn check failed)');
}

function digitsBetween(min: number, max: number) {
  return (value: unknown, field: string, errors: FieldErrorCollector): void => {
    const text = stringOf(value, field, errors);
    if (text !== undefined && (!DIGITS.test(text) || text.length < min || text.length > max)) {
      errors.add(field, min === max ? `must be ${min} digits` : `must be ${min} to ${max} digits`);
    }
  };
}

function routingNumber(value: unknown, field: string, errors: FieldErrorCollector): void {
  const text = stringOf(value, field, errors);
  if (text !== undefined && !isAbaRoutingNumber(text)) errors.add(field, 'must be a valid 9-digit ABA routing number');
}

/** Nine digits, or the delimited form (`123-45-6789` for an SSN, `12-3456789` for an EIN). */
function nineDigits(delimited: RegExp) {
  return (value: unknown, field: string, errors: FieldErrorCollector): void => {
    const text = stringOf(value, field, errors);
    if (text !== undefined && !/^[0-9]{9}$/.test(text) && !delimited.test(text)) errors.add(field, 'must be 9 digits, optionally delimited by -');
  };
}

type MemberRule = (value: unknown, field: string, errors: FieldErrorCollector) => void;

/** An object with the given members: `required` must be present, no other member is allowed. */
function objectOf(members: Record<string, MemberRule>, required: string[]) {
  return (data: unknown, field: string, errors: FieldErrorCollector): void => {
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return errors.add(field, 'must be an object');
    const record = data as Record<string, unknown>;
    for (const name of required) if (record[name] === undefined || record[name] === null) errors.add(`${field}.${name}`, 'is required');
    for (const [name, value] of Object.entries(record)) {
      const rule = members[name];
      if (!rule) errors.add(`${field}.${name.length > 100 ? `${name.slice(0, 100)}...` : name}`, 'is not allowed');
      else if (value !== undefined && value !== null) rule(value, `${field}.${name}`, errors);
    }
  };
}

function integerBetween(min: number, max: number): MemberRule {
  return (value, field, errors) => {
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) errors.add(field, `must be an integer from ${min} to ${max}`);
  };
}

const validateCardObject = objectOf(
  {
    number: cardNumber,
    expiration_month: integerBetween(1, 12),
    expiration_year: integerBetween(1000, 9999),
    cvc: digitsBetween(3, 4),
  },
  ['number'],
);

function validateCard(data: unknown, field: string, errors: FieldErrorCollector): void {
  validateCardObject(data, field, errors);
  if (data === null || typeof data !== 'object') return;
  const { expiration_month: month, expiration_year: year } = data as Record<string, unknown>;
  // The one without the other says nothing about when the card expires.
  if ((month == null) !== (year == null))
    errors.add(`${field}.${month == null ? 'expiration_month' : 'expiration_year'}`, 'is required with the other expiration member');
}

const validateBank = objectOf({ routing_number: routingNumber, account_number: digitsBetween(3, 17) }, ['routing_number', 'account_number']);

export const TOKEN_TYPE_DEFINITIONS: Readonly<Record<TokenType, TokenTypeDefinition>> = {
  token: {
    validate: () => undefined,
    defaultContainer: '/general/high/',
    defaultFingerprintExpression: '{{ data | stringify }}',
    defaultMask: null,
  },
  card: {
    validate: validateCard,
    defaultContainer: '/pci/high/',
    defaultFingerprintExpression: '{{ data.number }}',
    // The first six and last four digits; the cvc never appears in a mask.
    defaultMask: {
      number: '{{ data.number | reveal: 6, 4 }}',
      expiration_month: '{{ data.expiration_month }}',
      expiration_year: '{{ data.expiration_year }}',
    },
  },
  bank: {
    validate: validateBank,
    defaultContainer: '/bank/high/',
    defaultFingerprintExpression: '{{ data.account_number }}|{{ data.routing_number }}',
    defaultMask: { routing_number: '{{ data.routing_number }}', account_number: '{{ data.account_number | reveal_last: 4 }}' },
  },
  card_number: {
    validate: cardNumber,
    defaultContainer: '/pci/high/',
    defaultFingerprintExpression: '{{ data }}',
    defaultMask: REVEAL_LAST_4,
  },
  social_security_number: {
    validate: nineDigits(/^[0-9]{3}-[0-9]{2}-[0-9]{4}$/),
    defaultContainer: '/pii/high/',
    defaultFingerprintExpression: "{{ data | remove: '-' }}",
    defaultMask: REVEAL_LAST_4,
  },
  employer_id_number: {
    validate: nineDigits(/^[0-9]{2}-[0-9]{7}$/),
    defaultContainer: '/pii/high/',
    defaultFingerprintExpression: "{{ data | remove: '-' }}",
    defaultMask: REVEAL_LAST_4,
  },
  us_bank_routing_number: {
    validate: routingNumber,
    defaultContainer: '/bank/low/',
    defaultFingerprintExpression: '{{ data }}',
    defaultMask: REVEAL_LAST_4,
  },
  us_bank_account_number: {
    validate: digitsBetween(3, 17),
    defaultContainer: '/bank/high/',
    defaultFingerprintExpression: '{{ data }}',
    defaultMask: REVEAL_LAST_4,
  },
};

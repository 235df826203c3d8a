/**
 * `retryAt`: an RFC 3339 instant in UTC, read as the contracts read it (`Z` or a zero offset,
 * a fraction of any length, no leap second, years 0000 to 9999) and written back in one form:
 * `YYYY-MM-DDTHH:MM:SS[.fff]Z`, the fraction to nanoseconds, trailing zeros gone.
 */

const FORM =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:Z|[+-]00:00)$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** `text` in the one form, or `undefined` when it is not such an instant. */
export function normalize(text: string): string | undefined {
  const match = FORM.exec(text);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number, number, number, number, number, number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const fraction = (match[7] ?? "").slice(0, 9).padEnd(9, "0").replace(/0+$/, "");
  return text.slice(0, 19) + (fraction ? `.${fraction}` : "") + "Z";
}

/** A `Date` in the one form (to the millisecond). */
export function ofDate(moment: Date): string {
  const iso = moment.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const fraction = iso.slice(20, 23).replace(/0+$/, "");
  return iso.slice(0, 19) + (fraction ? `.${fraction}` : "") + "Z";
}

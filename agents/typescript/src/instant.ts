/**
 * `retryAt`: an RFC 3339 instant in UTC, read as the contracts read it (`Z` or a zero offset,
 * a fraction of any length, no leap second, years 0000 to 9999) and written back in one form:
 * `YYYY-MM-DDTHH:MM:SS[.fff]Z`, the fraction to nanoseconds, trailing zeros gone.
 */

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** The number the `count` digits at `at` write, or -1 where one is not a digit. */
function digits(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return -1;
    value = value * 10 + d;
  }
  return value;
}

/** `text` in the one form, or `undefined` when it is not such an instant. Read by position
 * (`YYYY-MM-DDTHH:MM:SS`, a fraction, then `Z` or a zero offset), the form already given
 * handed back as it is. */
export function normalize(text: string): string | undefined {
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  if (text[4] !== "-" || text[7] !== "-" || text[10] !== "T" || text[13] !== ":" || text[16] !== ":") {
    return undefined;
  }
  let end = 19;
  if (text.charCodeAt(end) === 46) {
    end++;
    while (digits(text, end, 1) >= 0) end++;
    if (end === 20) return undefined;
  }
  const offset = text.slice(end);
  if (offset !== "Z" && offset !== "+00:00" && offset !== "-00:00") return undefined;
  // The fraction to nanoseconds, its trailing zeros gone.
  let last = Math.min(end, 29);
  while (last > 20 && text.charCodeAt(last - 1) === 48) last--;
  if (last === 20) last = 19;
  if (last === end && offset === "Z") return text;
  return `${text.slice(0, last)}Z`;
}

/** A `Date` in the one form (to the millisecond). */
export function ofDate(moment: Date): string {
  const iso = moment.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const fraction = iso.slice(20, 23).replace(/0+$/, "");
  return iso.slice(0, 19) + (fraction ? `.${fraction}` : "") + "Z";
}

/// What kind of answer a field takes, and so how it is checked and normalised (`FieldValidator`).
public enum FieldType: String, Sendable, CaseIterable {
    /// Free text (trimmed, inner spaces collapsed).
    case text
    /// A person's name: letters (any script, or Latin only with `latinOnly`), spaces, hyphens, apostrophes.
    case name
    /// A calendar date in a common format, normalised to ISO-8601 `YYYY-MM-DD`.
    case date
    case email
    /// A telephone number: 7 to 15 digits (E.164), normalised to `+digits` or digits.
    case phone
    /// A US ZIP code: `12345` or `12345-6789`.
    case zip
    /// A US state or DC, by name or two-letter code, normalised to the code (`CA`).
    case usState
    /// A country (ISO 3166-1), by code in any case or by name in English, Arabic or Spanish, normalised to the
    /// alpha-3 code (`SWE`); `Countries`.
    case country
    /// Yes or no in English, Arabic or Spanish, normalised to `yes` / `no`.
    case yesNo
    /// One of `options`, by value, label (any language) or number; normalised to the option's value.
    case select
    /// A decimal number.
    case number
    /// A passport number: 6 to 9 letters or digits, normalised to upper case without spaces.
    case passportNumber
    /// A street address: a house number and a street name.
    case address
}

/// A field's `validation` object: extra limits on top of its type. Every key is optional.
public struct FieldValidation: Sendable, Equatable {
    public var minLength: Int?
    public var maxLength: Int?
    /// An ICU regular expression the whole normal form must match.
    public var pattern: String?
    /// What the pattern expects, for the error message (`3 capital letters, e.g. USA`).
    public var patternHint: LocalizedText?
    public var minimum: Double?
    public var maximum: Double?
    /// For dates: `past` (before today) or `future` (after today).
    public var date: DateLimit?
    /// Only Latin letters (A–Z, no accents), as printed in a passport's machine-readable zone.
    public var latinOnly: Bool

    public enum DateLimit: String, Sendable, CaseIterable { case past, future }

    public static let none = FieldValidation(latinOnly: false)

    public init(
        minLength: Int? = nil, maxLength: Int? = nil, pattern: String? = nil, patternHint: LocalizedText? = nil,
        minimum: Double? = nil, maximum: Double? = nil, date: DateLimit? = nil, latinOnly: Bool
    ) {
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
        self.patternHint = patternHint
        self.minimum = minimum
        self.maximum = maximum
        self.date = date
        self.latinOnly = latinOnly
    }
}

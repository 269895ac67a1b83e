import SanadCore

/// A date as a machine-readable zone prints it (`YYMMDD`, `<<` for an unknown month or day), with the century
/// resolved against a reference date.
public struct MRZDate: Sendable, Hashable {
    /// The six characters as read (after repairs).
    public let raw: String
    /// The four-digit year; nil when the year is unknown or unreadable.
    public let year: Int?
    public let month: Int?
    public let day: Int?

    /// The full date, when year, month and day are all known.
    public var date: CivilDate? {
        guard let year, let month, let day else { return nil }
        return CivilDate(year: year, month: month, day: day)
    }

    /// `YYYY-MM-DD`, or `YYYY-MM` / `YYYY` when the day or month is unknown.
    public var iso: String? {
        guard let year else { return nil }
        guard let month else { return zeroPadded(year, 4) }
        guard let day else { return "\(zeroPadded(year, 4))-\(zeroPadded(month, 2))" }
        return "\(zeroPadded(year, 4))-\(zeroPadded(month, 2))-\(zeroPadded(day, 2))"
    }
}

/// The sex field: `M`, `F`, `X` or `<` (unspecified).
public enum MRZSex: String, Sendable {
    case male = "M"
    case female = "F"
    case other = "X"
    case unspecified = "<"
}

/// One check digit and whether it held.
public struct MRZCheckResult: Sendable, Hashable {
    public let id: MRZCheckID
    public let passed: Bool
    /// The digit the covered characters compute to (nil if they hold a character outside the MRZ set).
    public let expected: Int?
    /// The character printed in the check position.
    public let found: Character
}

/// Why a repair was made.
public enum MRZRepairBasis: Sendable, Hashable {
    /// The field type forced it (a digit in a letters-only field, a letter in a digits-only field) and the named
    /// check digit holds after it.
    case checkDigit(MRZCheckID)
    /// Only the field type supports it: the field is letters-only (names, codes) and no check digit covers it, or
    /// the covering check still fails (then the result is invalid anyway).
    case fieldType
    /// `K` read for `<` inside a trailing run of fillers that starts with a `<`.
    case fillerStructure
}

/// One character the reader changed.
public struct MRZRepair: Sendable, Hashable, CustomStringConvertible {
    /// 0-based line and column in the zone.
    public let line: Int
    public let column: Int
    public let field: MRZFieldID
    public let from: Character
    public let to: Character
    public let basis: MRZRepairBasis

    public var description: String {
        let why: String
        switch basis {
        case .checkDigit(let id): why = "confirmed by the \(id.rawValue) check digit"
        case .fieldType: why = "field type only"
        case .fillerStructure: why = "filler run"
        }
        return "line \(line + 1) column \(column + 1) (\(field.rawValue)): '\(from)' → '\(to)', \(why)"
    }
}

/// How far a field's value is protected.
public enum MRZVerification: Sendable, Hashable {
    /// Covered by its own check digit (which held).
    case checkDigit
    /// Covered only by the composite check digit (which held).
    case composite
    /// No check covers it; its character class (letters only) is all there is.
    case fieldType
    /// Neither a check nor a character class protects it (visa optional data): any OCR error there goes unseen.
    case none
}

/// A character position whose classic confusion no check digit can see: `G` and `6` weigh 16 and 6, the same mod 10
/// under every weight, so a `G`/`6` swap in a letters-and-digits field leaves every check digit unchanged.
public struct MRZCheckBlindCharacter: Sendable, Hashable {
    public let line: Int
    public let column: Int
    public let field: MRZFieldID
}

/// A parsed machine-readable zone. `isValid` is true only when every check digit holds and no field is malformed.
public struct MRZResult: Sendable {
    public let format: MRZFormat
    /// The zone's lines after repairs.
    public let lines: [String]
    /// The lines as found in the text, normalised (upper case, no spaces), before repairs.
    public let linesAsRead: [String]
    /// `P`, `PD`, `I`, `ID`, `V`, … (fillers removed).
    public let documentType: String
    public let issuingState: String
    public let surname: String
    public let givenNames: [String]
    /// The name field is full to its last character, so the name may have been cut.
    public let nameIsPossiblyTruncated: Bool
    /// Fillers removed; long TD1/TD2 numbers include the part carried in the optional data.
    public let documentNumber: String
    public let nationality: String
    public let dateOfBirth: MRZDate
    public let sex: MRZSex?
    public let dateOfExpiry: MRZDate
    /// TD1 line 1 optional data, the TD2/visa optional data, or the TD3 personal number (fillers trimmed).
    public let optionalData1: String
    /// TD1 line 2 optional data.
    public let optionalData2: String
    public let checks: [MRZCheckResult]
    public let repairs: [MRZRepair]
    /// Malformed fields (impossible dates, wrong character classes, ambiguous repairs).
    public let problems: [String]
    /// Non-fatal remarks (an issuing state outside the ISO/ICAO lists).
    public internal(set) var notes: [String]
    /// `G`/`6` positions in checked letters-and-digits fields: no check digit can confirm them.
    public let checkBlindCharacters: [MRZCheckBlindCharacter]
    let verifications: [MRZFieldID: MRZVerification]

    /// Every check digit held and no field is malformed.
    public var isValid: Bool { problems.isEmpty && checks.allSatisfy(\.passed) }

    /// The checks that failed.
    public var failedChecks: [MRZCheckID] { checks.filter { !$0.passed }.map(\.id) }

    /// How far a field's value is protected (given the result is valid).
    public func verification(of field: MRZFieldID) -> MRZVerification { verifications[field] ?? .none }

    /// Given names joined with spaces.
    public var givenNamesText: String { givenNames.joined(separator: " ") }

    /// The issuing state's meaning when it is one of ICAO's special codes.
    public var issuingStateNote: String? { MRZCountryCodes.special[issuingState] }
}

import Foundation
import SanadCore

/// Decodes one candidate zone of known format: repairs what the field types and check digits allow, runs every
/// check, and reads the fields. Input lines are upper case, MRZ characters only, of the format's length.
struct MRZDecoder {
    let layout: MRZLayout
    let reference: CivilDate
    private var lines: [[UInt8]]
    private let asRead: [[UInt8]]
    private var checks: [MRZCheckSpec]
    private var repairs: [MRZRepair] = []
    private var problems: [String] = []
    /// Digit/letter repairs in numeric fields, confirmed (or not) once the checks have run.
    private var pendingNumeric: [(line: Int, column: Int, field: MRZFieldID, from: UInt8, to: UInt8)] = []
    /// Overflow columns of a long TD1/TD2 document number in the optional data (number part, then check digit).
    private var overflow: (line: Int, columns: Range<Int>)?

    init(lines: [[UInt8]], format: MRZFormat, reference: CivilDate) {
        self.layout = MRZLayout.of(format)
        self.reference = reference
        self.lines = lines
        self.asRead = lines
        self.checks = layout.checks
    }

    /// Decodes one window. `repairBudget` is how many repair combinations the caller's block may still try; the
    /// search spends from it and is skipped (no check-digit repair) once it is spent.
    static func decode(
        lines: [[UInt8]], format: MRZFormat, reference: CivilDate, repairBudget: inout Int
    ) -> MRZResult {
        var decoder = MRZDecoder(lines: lines, format: format, reference: reference)
        return decoder.run(repairBudget: &repairBudget)
    }

    /// `decode` with the whole search allowed (one zone, no block around it).
    static func decode(lines: [[UInt8]], format: MRZFormat, reference: CivilDate) -> MRZResult {
        var budget = maxRepairCombinations
        return decode(lines: lines, format: format, reference: reference, repairBudget: &budget)
    }

    /// The most combinations of candidate repairs one zone's search tries.
    static let maxRepairCombinations = 4096

    private mutating func run(repairBudget: inout Int) -> MRZResult {
        for field in layout.fields { repairFillers(field) }
        for field in layout.fields { repairByType(field) }
        locateLongDocumentNumber()
        repairByChecks(budget: &repairBudget)
        let results = checks.map(evaluate)
        confirmNumericRepairs(results)
        return assemble(results)
    }

    // MARK: repairs

    private func char(_ line: Int, _ column: Int) -> UInt8 { lines[line][column] }

    private mutating func set(_ line: Int, _ column: Int, _ value: UInt8, field: MRZFieldID, basis: MRZRepairBasis) {
        repairs.append(
            MRZRepair(
                line: line, column: column, field: field, from: Character(Unicode.Scalar(lines[line][column])),
                to: Character(Unicode.Scalar(value)), basis: basis))
        lines[line][column] = value
    }

    /// `K` read for `<`: inside the trailing run of `K`/`<` of a field, a `K` after three fillers is a filler. No
    /// name or number can hold `<<<K` (components are parted by one `<`, surname and given names by two), so the
    /// rule never touches a real `K`; a `K` after fewer fillers stays (it could be a one-letter name).
    private mutating func repairFillers(_ field: MRZFieldSpec) {
        guard field.kind == .alpha || field.kind == .alphanumeric else { return }
        let k = UInt8(ascii: "K")
        var start = field.columns.upperBound
        while start > field.columns.lowerBound, [k, MRZAlphabet.filler].contains(char(field.line, start - 1)) {
            start -= 1
        }
        for column in start..<field.columns.upperBound where char(field.line, column) == k {
            guard column - 3 >= field.columns.lowerBound,
                (column - 3..<column).allSatisfy({ char(field.line, $0) == MRZAlphabet.filler })
            else { continue }
            set(field.line, column, MRZAlphabet.filler, field: field.id, basis: .fillerStructure)
        }
    }

    private mutating func repairByType(_ field: MRZFieldSpec) {
        for column in field.columns {
            let c = char(field.line, column)
            switch field.kind {
            case .alpha:
                if MRZAlphabet.isDigit(c) {
                    if let letter = MRZAlphabet.letterForDigit[c] {
                        set(field.line, column, letter, field: field.id, basis: .fieldType)
                    } else {
                        problems.append(
                            problem(field, column, "digit '\(Character(Unicode.Scalar(c)))' in a letters-only field"))
                    }
                }
            case .numeric, .checkDigit:
                if MRZAlphabet.isLetter(c) {
                    if let digit = MRZAlphabet.digitForLetter[c] {
                        pendingNumeric.append((field.line, column, field.id, c, digit))
                        lines[field.line][column] = digit
                    } else {
                        problems.append(
                            problem(field, column, "letter '\(Character(Unicode.Scalar(c)))' in a digits-only field"))
                    }
                }
            case .sex:
                if !"MFX<".utf8.contains(c) {
                    problems.append(
                        problem(field, column, "sex must be M, F, X or <, found '\(Character(Unicode.Scalar(c)))'"))
                }
            case .alphanumeric:
                break
            }
        }
    }

    private func problem(_ field: MRZFieldSpec, _ column: Int, _ message: String) -> String {
        "line \(field.line + 1) column \(column + 1) (\(field.id.rawValue)): \(message)"
    }

    /// TD1/TD2: a `<` in the document number's check position means the number continues in the optional data,
    /// followed by its check digit and a `<` (Doc 9303 parts 5 and 6; TD3 defines no such overflow). The check
    /// digit covers the nine principal characters, the `<` after them and the continuation: the Belgian specimen
    /// `000590240<601` checks to 3 only so (the Utopia specimen checks either way).
    private mutating func locateLongDocumentNumber() {
        guard layout.format == .td1 || layout.format == .td2,
            let number = layout.field(.documentNumber), let check = layout.field(.documentNumberCheck),
            let optional = layout.field(.optionalData1),
            char(check.line, check.columns.lowerBound) == MRZAlphabet.filler,
            !lines[number.line][number.columns].contains(MRZAlphabet.filler)
        else { return }
        var end = optional.columns.lowerBound
        while end < optional.columns.upperBound, char(optional.line, end) != MRZAlphabet.filler { end += 1 }
        guard end - optional.columns.lowerBound >= 2 else {
            problems.append(
                problem(
                    check, check.columns.lowerBound,
                    "'<' marks a long document number but the optional data "
                        + "holds no continuation and check digit"))
            return
        }
        let digitColumn = end - 1
        let c = char(optional.line, digitColumn)
        if let digit = MRZAlphabet.digitForLetter[c] {
            pendingNumeric.append((optional.line, digitColumn, .documentNumberCheck, c, digit))
            lines[optional.line][digitColumn] = digit
        }
        overflow = (optional.line, optional.columns.lowerBound..<end)
        if let index = checks.firstIndex(where: { $0.id == .documentNumber }) {
            checks[index].covered = [
                (number.line, number.columns.lowerBound..<check.columns.upperBound),
                (optional.line, optional.columns.lowerBound..<digitColumn),
            ]
            checks[index].digit = (optional.line, digitColumn)
        }
    }

    private func computed(_ spec: MRZCheckSpec) -> Int? {
        MRZAlphabet.checkDigit(spec.covered.flatMap { lines[$0.line][$0.columns] })
    }

    private func passes(_ spec: MRZCheckSpec) -> Bool {
        let printed = char(spec.digit.line, spec.digit.column)
        if spec.fillerWhenEmpty,
            spec.covered.allSatisfy({ lines[$0.line][$0.columns].allSatisfy { $0 == MRZAlphabet.filler } })
        {
            return printed == MRZAlphabet.filler || printed == UInt8(ascii: "0")
        }
        guard MRZAlphabet.isDigit(printed), let expected = computed(spec) else { return false }
        return Int(printed) - 48 == expected
    }

    /// The letters-and-digits positions a failing check may repair: the ones it covers that no other check does.
    private func repairablePositions(_ spec: MRZCheckSpec) -> [(line: Int, column: Int, field: MRZFieldID)] {
        let others = checks.filter { $0.id != spec.id && $0.id != .composite }
        var positions: [(Int, Int, MRZFieldID)] = []
        for range in spec.covered {
            for column in range.columns {
                guard let field = fieldAt(range.line, column), field.kind == .alphanumeric else { continue }
                let elsewhere = others.contains { other in
                    other.covered.contains { $0.line == range.line && $0.columns.contains(column) }
                }
                if !elsewhere { positions.append((range.line, column, field.id)) }
            }
        }
        return positions
    }

    private func fieldAt(_ line: Int, _ column: Int) -> MRZFieldSpec? {
        layout.fields.first { $0.line == line && $0.columns.contains(column) }
    }

    /// Single classic confusions in letters-and-digits fields, repaired only with two independent confirmations:
    /// the field's own check digit and the composite check over the same characters must both hold afterwards. One
    /// check alone cannot tell a misread character from a misread check digit, so fields without a second check
    /// (visas, composite-only optional data) are never repaired this way.
    private mutating func repairByChecks(budget: inout Int) {
        guard checks.contains(where: { $0.id == .composite }) else { return }
        var options: [[(line: Int, column: Int, field: MRZFieldID, to: UInt8)]] = []
        for spec in checks where spec.id != .composite && !passes(spec) {
            guard MRZAlphabet.isDigit(char(spec.digit.line, spec.digit.column)) else { return }
            var candidates: [(line: Int, column: Int, field: MRZFieldID, to: UInt8)] = []
            for p in repairablePositions(spec) {
                let original = char(p.line, p.column)
                guard let swapped = MRZAlphabet.confusable(original) else { continue }
                lines[p.line][p.column] = swapped
                if passes(spec) { candidates.append((p.line, p.column, p.field, swapped)) }
                lines[p.line][p.column] = original
            }
            if candidates.isEmpty { return }
            options.append(candidates)
        }
        let combinations = options.reduce(1) { $0 * $1.count }
        guard !options.isEmpty, combinations <= min(Self.maxRepairCombinations, budget) else { return }
        budget -= combinations
        // Every combination of one candidate per failing field; keep those under which every check holds.
        var working: [[(line: Int, column: Int, field: MRZFieldID, to: UInt8)]] = []
        var combination: [(line: Int, column: Int, field: MRZFieldID, to: UInt8)] = []
        func search(_ depth: Int, _ decoder: inout MRZDecoder) {
            if depth == options.count {
                if decoder.checks.allSatisfy({ decoder.passes($0) }) { working.append(combination) }
                return
            }
            for fix in options[depth] {
                let original = decoder.lines[fix.line][fix.column]
                decoder.lines[fix.line][fix.column] = fix.to
                combination.append(fix)
                search(depth + 1, &decoder)
                combination.removeLast()
                decoder.lines[fix.line][fix.column] = original
            }
        }
        search(0, &self)
        if working.count == 1, let fixes = working.first {
            for fix in fixes {
                let covering = checks.first { spec in
                    spec.id != .composite
                        && spec.covered.contains { $0.line == fix.line && $0.columns.contains(fix.column) }
                }
                set(fix.line, fix.column, fix.to, field: fix.field, basis: .checkDigit(covering?.id ?? .composite))
            }
        } else if working.count > 1 {
            problems.append(
                "\(working.count) different repairs of classic OCR confusions would satisfy every check: refusing to guess"
            )
        }
    }

    private func evaluate(_ spec: MRZCheckSpec) -> MRZCheckResult {
        MRZCheckResult(
            id: spec.id, passed: passes(spec), expected: computed(spec),
            found: Character(Unicode.Scalar(char(spec.digit.line, spec.digit.column))))
    }

    private mutating func confirmNumericRepairs(_ results: [MRZCheckResult]) {
        for pending in pendingNumeric {
            let covering = checks.first { spec in
                (spec.digit.line == pending.line && spec.digit.column == pending.column)
                    || spec.covered.contains { $0.line == pending.line && $0.columns.contains(pending.column) }
            }
            var basis = MRZRepairBasis.fieldType
            if let covering, results.first(where: { $0.id == covering.id })?.passed == true {
                basis = .checkDigit(covering.id)
            }
            repairs.append(
                MRZRepair(
                    line: pending.line, column: pending.column, field: pending.field,
                    from: Character(Unicode.Scalar(pending.from)), to: Character(Unicode.Scalar(pending.to)),
                    basis: basis))
        }
        repairs.sort { ($0.line, $0.column) < ($1.line, $1.column) }
    }

    // MARK: fields

    private func text(_ id: MRZFieldID) -> String {
        guard let field = layout.field(id) else { return "" }
        return String(decoding: lines[field.line][field.columns], as: UTF8.self)
    }

    private func trimmed(_ id: MRZFieldID) -> String { trimFillers(text(id)) }

    private mutating func assemble(_ results: [MRZCheckResult]) -> MRZResult {
        var documentNumber = trimmed(.documentNumber)
        var optional1 = trimmed(.optionalData1)
        if let overflow, let optional = layout.field(.optionalData1) {
            let continuation = lines[overflow.line][overflow.columns.lowerBound..<(overflow.columns.upperBound - 1)]
            documentNumber = text(.documentNumber) + String(decoding: continuation, as: UTF8.self)
            let rest = min(overflow.columns.upperBound + 1, optional.columns.upperBound)
            optional1 = trimFillers(
                String(decoding: lines[optional.line][rest..<optional.columns.upperBound], as: UTF8.self))
        }
        let (surname, given) = splitName(text(.name))
        let nameText = text(.name)
        let dob = readDate(.dateOfBirth, birth: true)
        let expiry = readDate(.dateOfExpiry, birth: false)
        var notes: [String] = []
        for id in [MRZFieldID.issuingState, .nationality] where !MRZCountryCodes.isKnown(trimmed(id)) {
            notes.append("\(id.rawValue) '\(trimmed(id))' is neither an ISO 3166-1 nor an ICAO code")
        }
        return MRZResult(
            format: layout.format, lines: lines.map { String(decoding: $0, as: UTF8.self) },
            linesAsRead: asRead.map { String(decoding: $0, as: UTF8.self) }, documentType: trimmed(.documentType),
            issuingState: trimmed(.issuingState), surname: surname, givenNames: given,
            nameIsPossiblyTruncated: nameText.last != "<", documentNumber: documentNumber,
            nationality: trimmed(.nationality), dateOfBirth: dob, sex: MRZSex(rawValue: text(.sex)),
            dateOfExpiry: expiry, optionalData1: optional1, optionalData2: trimmed(.optionalData2), checks: results,
            repairs: repairs, problems: problems, notes: notes, checkBlindCharacters: checkBlind(),
            verifications: verificationTable())
    }

    private func splitName(_ field: String) -> (String, [String]) {
        let name = trimFillers(field)
        let parts = name.components(separatedBy: "<<")
        let surname = parts[0].split(separator: "<").joined(separator: " ")
        let given = parts.dropFirst().joined(separator: "<").split(separator: "<").map(String.init)
        return (surname, given)
    }

    /// `YYMMDD`; `<<` for an unknown month or day. Birth dates fall on or before the reference date; expiry dates
    /// fall within 20 years after it (and at most 79 years before).
    private mutating func readDate(_ id: MRZFieldID, birth: Bool) -> MRZDate {
        let raw = text(id)
        guard let field = layout.field(id) else { return MRZDate(raw: raw, year: nil, month: nil, day: nil) }
        let bytes = Array(raw.utf8)
        func part(_ i: Int) -> Int?? {
            let (high, low) = (bytes[i], bytes[i + 1])
            if high == MRZAlphabet.filler && low == MRZAlphabet.filler { return .some(nil) }
            guard MRZAlphabet.isDigit(high), MRZAlphabet.isDigit(low) else { return nil }
            return .some(Int(high - 48) * 10 + Int(low - 48))
        }
        guard bytes.count == 6, let yy = part(0), let mm = part(2), let dd = part(4) else {
            problems.append("line \(field.line + 1) (\(id.rawValue)): '\(raw)' is not a YYMMDD date")
            return MRZDate(raw: raw, year: nil, month: nil, day: nil)
        }
        guard let yy else { return MRZDate(raw: raw, year: nil, month: nil, day: nil) }
        var year = reference.year / 100 * 100 + yy
        if birth {
            let monthForCompare = mm ?? 1
            let dayForCompare = dd ?? 1
            if (year, monthForCompare, dayForCompare) > (reference.year, reference.month, reference.day) {
                year -= 100
            }
        } else if year > reference.year + 20 {
            year -= 100
        } else if year < reference.year - 79 {
            year += 100
        }
        if let mm, !(1...12).contains(mm) {
            problems.append("line \(field.line + 1) (\(id.rawValue)): month \(mm) in '\(raw)' does not exist")
        } else if let dd, dd < 1 || dd > CivilDate.daysIn(month: mm ?? 1, year: year) {
            problems.append("line \(field.line + 1) (\(id.rawValue)): day \(dd) in '\(raw)' does not exist")
        }
        return MRZDate(raw: raw, year: year, month: mm ?? nil, day: dd ?? nil)
    }

    private func checkBlind() -> [MRZCheckBlindCharacter] {
        var found: [MRZCheckBlindCharacter] = []
        for field in layout.fields where field.kind == .alphanumeric {
            for column in field.columns where [UInt8(ascii: "G"), UInt8(ascii: "6")].contains(char(field.line, column))
            {
                if checks.contains(where: { spec in
                    spec.covered.contains { $0.line == field.line && $0.columns.contains(column) }
                }) {
                    found.append(MRZCheckBlindCharacter(line: field.line, column: column, field: field.id))
                }
            }
        }
        return found
    }

    private func verificationTable() -> [MRZFieldID: MRZVerification] {
        var table: [MRZFieldID: MRZVerification] = [:]
        for field in layout.fields {
            switch field.kind {
            case .alpha, .sex:
                table[field.id] = .fieldType
            case .numeric, .checkDigit:
                table[field.id] = .checkDigit
            case .alphanumeric:
                let covering = checks.filter { spec in
                    field.columns.allSatisfy { column in
                        spec.covered.contains { $0.line == field.line && $0.columns.contains(column) }
                            || (spec.digit.line == field.line && spec.digit.column == column)
                    }
                }
                if covering.contains(where: { $0.id != .composite }) {
                    table[field.id] = .checkDigit
                } else if covering.contains(where: { $0.id == .composite }) {
                    table[field.id] = .composite
                } else {
                    table[field.id] = MRZVerification.none
                }
            }
        }
        return table
    }
}

/// Drops trailing `<` fillers.
func trimFillers(_ s: String) -> String {
    var s = Substring(s)
    while s.last == "<" { s = s.dropLast() }
    return String(s)
}

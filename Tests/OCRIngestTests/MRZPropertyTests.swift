import SanadCore
import SanadTestSupport
import Testing

@testable import OCRIngestPlugin

/// Random valid zones of every format, with check digits computed here.
enum MRZGenerator {
    static let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
    static let alnum = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
    static let codes = ["UTO", "D", "XXA", "XXB", "XXC", "XXX", "FRA", "GBR", "USA", "SAU", "NLD", "BOL", "ZAF", "GBD"]

    static func random(_ rng: inout SeededGenerator) -> (MRZFormat, [String]) {
        let format = MRZFormat.allCases.randomElement(using: &rng) ?? .td3
        let layout = MRZLayout.of(format)
        let (count, length) = format.shape
        var lines = [[UInt8]](repeating: [UInt8](repeating: MRZAlphabet.filler, count: length), count: count)
        func put(_ id: MRZFieldID, _ value: [UInt8]) {
            guard let f = layout.field(id) else { return }
            for (i, c) in value.prefix(f.columns.count).enumerated() { lines[f.line][f.columns.lowerBound + i] = c }
        }
        func word(_ n: Int, _ set: [UInt8]) -> [UInt8] { (0..<n).map { _ in set.randomElement(using: &rng) ?? 65 } }
        func date(_ years: ClosedRange<Int>) -> [UInt8] {
            let y = Int.random(in: years, using: &rng)
            let m = Int.random(in: 1...12, using: &rng)
            let d = Int.random(in: 1...CivilDate.daysIn(month: m, year: y), using: &rng)
            return Array((zeroPadded(y % 100, 2) + zeroPadded(m, 2) + zeroPadded(d, 2)).utf8)
        }
        let types: [String] =
            switch format {
            case .td3: ["P<", "PD", "PS"]
            case .mrvA, .mrvB: ["V<", "VE"]
            case .td1, .td2: ["I<", "ID", "A<", "C<", "IR"]
            }
        put(.documentType, Array((types.randomElement(using: &rng) ?? "P<").utf8))
        put(.issuingState, Array((codes.randomElement(using: &rng) ?? "UTO").utf8))
        put(.nationality, Array((codes.randomElement(using: &rng) ?? "UTO").utf8))
        var name = word(Int.random(in: 2...12, using: &rng), letters)
        if Bool.random(using: &rng) { name += [MRZAlphabet.filler] + word(Int.random(in: 2...8, using: &rng), letters) }
        for index in 0..<Int.random(in: 0...3, using: &rng) {
            name += (index == 0 ? [MRZAlphabet.filler, MRZAlphabet.filler] : [MRZAlphabet.filler])
            name += word(Int.random(in: 1...9, using: &rng), letters)
        }
        put(.name, name)
        put(.dateOfBirth, date(1930...2025))
        put(.dateOfExpiry, date(2000...2045))
        put(.sex, [Array("MFX<".utf8).randomElement(using: &rng) ?? 77])
        let long = (format == .td1 || format == .td2) && Int.random(in: 0..<8, using: &rng) == 0
        let number = word(long ? Int.random(in: 10...12, using: &rng) : Int.random(in: 6...9, using: &rng), alnum)
        put(.documentNumber, number)
        if let optional = layout.field(.optionalData1) {
            var data: [UInt8] = []
            if long {
                let rest = Array(number.dropFirst(9))
                // The check digit covers the nine principal characters, the `<` after them and the rest.
                let checked = Array(number.prefix(9)) + [MRZAlphabet.filler] + rest
                data = rest + [UInt8(48 + (MRZAlphabet.checkDigit(checked) ?? 0)), MRZAlphabet.filler]
            }
            let room = optional.columns.count - data.count - 1
            if room > 0, Bool.random(using: &rng) { data += word(Int.random(in: 1...room, using: &rng), alnum) }
            put(.optionalData1, data)
        }
        if format == .td1, Bool.random(using: &rng) {
            put(.optionalData2, word(Int.random(in: 1...11, using: &rng), alnum))
        }
        for spec in layout.checks {
            if long && spec.id == .documentNumber { continue }
            let covered = spec.covered.flatMap { lines[$0.line][$0.columns] }
            var digit = UInt8(48 + (MRZAlphabet.checkDigit(covered) ?? 0))
            if spec.fillerWhenEmpty, covered.allSatisfy({ $0 == MRZAlphabet.filler }), Bool.random(using: &rng) {
                digit = MRZAlphabet.filler
            }
            lines[spec.digit.line][spec.digit.column] = digit
        }
        return (format, lines.map { String(decoding: $0, as: UTF8.self) })
    }
}

/// Realistic OCR noise: classic confusions where a field's class makes them plausible (at most one per group of
/// letters-and-digits characters that one check digit guards), `«` and `K` for fillers, lower case, stray spaces,
/// wrong line breaks and text around the zone.
enum OCRNoise {
    static func apply(_ lines: [String], format: MRZFormat, _ rng: inout SeededGenerator) -> String {
        let layout = MRZLayout.of(format)
        var chars = lines.map { Array($0.utf8).map { String(Character(Unicode.Scalar($0))) } }
        var usedGroups: Set<String> = []
        for field in layout.fields {
            // Trailing filler run of the field (in the clean line).
            var runStart = field.columns.upperBound
            while runStart > field.columns.lowerBound, chars[field.line][runStart - 1] == "<" { runStart -= 1 }
            for column in field.columns {
                let c = chars[field.line][column]
                let roll = Int.random(in: 0..<100, using: &rng)
                if c == "<" {
                    if column >= runStart + 3, field.kind == .alpha || field.kind == .alphanumeric, roll < 10 {
                        chars[field.line][column] = "K"
                    } else if roll >= 95 {
                        chars[field.line][column] = "«"
                    }
                    continue
                }
                guard let byte = c.utf8.first, let swapped = MRZAlphabet.confusable(byte), roll < 12 else { continue }
                let isDigit = MRZAlphabet.isDigit(byte)
                switch field.kind {
                case .alpha where !isDigit, .numeric where isDigit, .checkDigit where isDigit:
                    chars[field.line][column] = String(Character(Unicode.Scalar(swapped)))
                case .alphanumeric:
                    let group =
                        layout.checks.first { spec in
                            spec.id != .composite
                                && spec.covered.contains { $0.line == field.line && $0.columns.contains(column) }
                        }?.id.rawValue ?? "composite-only"
                    if usedGroups.insert(group).inserted {
                        chars[field.line][column] = String(Character(Unicode.Scalar(swapped)))
                    }
                default: break
                }
            }
        }
        var stream = chars.map { $0.joined() }
        if Int.random(in: 0..<3, using: &rng) == 0 { stream = stream.map { $0.lowercased() } }
        // Line breaks: as printed, all on one line, or broken at random places.
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: break
        case 1: stream = [stream.joined()]
        default:
            let all = Array(stream.joined())
            var pieces: [String] = []
            var start = 0
            while start < all.count {
                let end = min(all.count, start + Int.random(in: 8...60, using: &rng))
                pieces.append(String(all[start..<end]))
                start = end
            }
            stream = pieces
        }
        // Stray spaces.
        stream = stream.map { line in
            var out = ""
            for ch in line {
                out.append(ch)
                if Int.random(in: 0..<40, using: &rng) == 0 { out.append(" ") }
            }
            return out
        }
        let before = ["REPUBLIC OF UTOPIA", "Passport / Passeport", "Surname: Eriksson", "Date of birth 12 AUG 1974"]
        let after = ["Authority: Ministry of Travel.", "Signature of bearer", "Page 2 of 32"]
        let head = before.prefix(Int.random(in: 0...before.count, using: &rng))
        let tail = after.prefix(Int.random(in: 0...after.count, using: &rng))
        return (head + stream + tail).joined(separator: Bool.random(using: &rng) ? "\n" : "\n\n")
    }
}

@Suite("MRZ properties")
struct MRZPropertyTests {
    @Test("Generated valid zones read back exactly")
    func cleanRoundTrip() throws {
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<500 {
            let (format, lines) = MRZGenerator.random(&rng)
            let r = try MRZReader.read(lines: lines, reference: testReference)
            #expect(r.isValid, "\(lines): \(r.problems) \(r.failedChecks)")
            #expect(r.format == format && r.lines == lines && r.repairs.isEmpty, "\(lines)")
        }
    }

    @Test("Noisy OCR of 2000 zones: repaired to exactly the original or refused, never silently wrong")
    func noisy() throws {
        var rng = SeededGenerator(seed: 20261124)
        var exact = 0
        var refused = 0
        var flagged = 0
        var repaired = 0
        let cases = 2000
        for _ in 0..<cases {
            let (format, lines) = MRZGenerator.random(&rng)
            let text = OCRNoise.apply(lines, format: format, &rng)
            guard let r = try? MRZReader.read(text, reference: testReference), r.isValid else {
                refused += 1
                continue
            }
            if r.lines == lines {
                exact += 1
                if !r.repairs.isEmpty { repaired += 1 }
                continue
            }
            // A valid result may differ only where no check can see it: G/6 in a checked field (flagged) or a
            // field no check covers (visa optional data, reported as unverified).
            let layout = MRZLayout.of(r.format)
            var silent: [String] = []
            for (lineIndex, (got, want)) in zip(r.lines, lines).enumerated() {
                for (column, (g, w)) in zip(got, want).enumerated() where g != w {
                    let blind = r.checkBlindCharacters.contains { $0.line == lineIndex && $0.column == column }
                    let field = layout.fields.first { $0.line == lineIndex && $0.columns.contains(column) }
                    let unverified = field.map { r.verification(of: $0.id) == MRZVerification.none } ?? false
                    if !blind && !unverified { silent.append("line \(lineIndex + 1) col \(column + 1): \(w)→\(g)") }
                }
            }
            #expect(r.format == format && r.lines.count == lines.count, "\(lines) read as \(r.format)")
            #expect(silent.isEmpty, "silently wrong: \(silent) in \(lines) from \(text.debugDescription)")
            flagged += 1
        }
        #expect(exact + refused + flagged == cases)
        // The repairs do real work: most noisy zones come back exactly (the numbers are deterministic: fixed seed).
        #expect(exact * 100 >= cases * 60, "exact \(exact), flagged \(flagged), refused \(refused)")
        print(
            "noisy MRZ: \(exact) exact (\(repaired) after repairs), \(flagged) differing only where flagged, \(refused) refused of \(cases)"
        )
    }

    @Test("Every single-digit corruption of a check digit is flagged with the failing check")
    func checkDigitCorruption() throws {
        var rng = SeededGenerator(seed: 99)
        var flaggedCount = 0
        for _ in 0..<150 {
            let (format, lines) = MRZGenerator.random(&rng)
            let clean = try MRZReader.read(lines: lines, reference: testReference)
            let layout = MRZLayout.of(format)
            for field in layout.fields where field.kind == .checkDigit {
                var bytes = lines.map { Array($0.utf8) }
                let original = bytes[field.line][field.columns.lowerBound]
                guard MRZAlphabet.isDigit(original) else { continue }
                for digit in UInt8(ascii: "0")...UInt8(ascii: "9") where digit != original {
                    bytes[field.line][field.columns.lowerBound] = digit
                    let corrupted = bytes.map { String(decoding: $0, as: UTF8.self) }
                    let r = try MRZReader.read(lines: corrupted, reference: testReference)
                    #expect(!r.isValid, "\(corrupted) read as valid")
                    #expect(!r.failedChecks.isEmpty)
                    flaggedCount += 1
                }
            }
            #expect(clean.isValid)
        }
        #expect(flaggedCount > 1000)
    }

    @Test("Single-character corruptions of checked digits-only fields are flagged")
    func fieldCorruption() throws {
        var rng = SeededGenerator(seed: 5)
        for _ in 0..<200 {
            let (format, lines) = MRZGenerator.random(&rng)
            let layout = MRZLayout.of(format)
            for field in layout.fields where field.kind == .numeric {
                var bytes = lines.map { Array($0.utf8) }
                let column = field.columns.lowerBound + Int.random(in: 0..<field.columns.count, using: &rng)
                let original = bytes[field.line][column]
                let replacement =
                    UInt8(ascii: "0") + UInt8((Int(original) - 48 + Int.random(in: 1...9, using: &rng)) % 10)
                bytes[field.line][column] = replacement
                let r = try MRZReader.read(
                    lines: bytes.map { String(decoding: $0, as: UTF8.self) }, reference: testReference)
                #expect(!r.isValid)
            }
        }
    }
}

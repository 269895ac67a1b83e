import Foundation
import SanadCore
import SanadTestSupport
import Testing

@testable import OCRIngestPlugin

@Suite("MRZ repairs and refusals")
struct MRZRepairTests {
    @Test("A noisy TD3 scan inside page text is found and repaired, each repair reported")
    func noisyPassport() throws {
        let text = """
            REPUBLIC OF UTOPIA   PASSPORT
            Surname / Nom: ERIKSSON
            p<ut0eriks50n<<anna<maria<<<<<<KKKK<<<<<<<<«
            L8989O2C3 6UTO74O8122F12O4159ZE184226B<<<<<1
            0
            """
        let r = try MRZReader.read(text, reference: testReference)
        #expect(r.isValid)
        #expect(r.lines == Specimen.td3)
        #expect(r.documentNumber == "L898902C3" && r.surname == "ERIKSSON")
        let byColumn = Dictionary(uniqueKeysWithValues: r.repairs.map { ("\($0.line):\($0.column)", $0) })
        #expect(byColumn["1:5"]?.basis == .checkDigit(.documentNumber))  // O → 0 in the document number
        #expect(byColumn["1:15"]?.basis == .checkDigit(.dateOfBirth))  // O → 0 in the birth date
        #expect(byColumn["1:23"]?.basis == .checkDigit(.dateOfExpiry))
        #expect(byColumn["0:4"]?.basis == .fieldType)  // 0 → O in UTO
        #expect(byColumn["0:10"]?.basis == .fieldType)  // 5 → S in ERIKSSON
        #expect(r.repairs.filter { $0.basis == .fillerStructure }.count == 4)
        #expect(r.repairs.allSatisfy { !$0.description.isEmpty })
    }

    @Test("Two single repairs that both satisfy the check digit: refused, not guessed")
    func ambiguousRepair() throws {
        // 8 read as B at column 4: swapping column 2's 8 for B satisfies the check digit just as well.
        var lines = Specimen.td3
        lines[1] = "L89B902C3" + String(lines[1].dropFirst(9))
        let r = try MRZReader.read(lines: lines, reference: testReference)
        #expect(!r.isValid && r.problems.contains { $0.contains("refusing to guess") })
        #expect(r.documentNumber == "L89B902C3")
    }

    @Test("A confusion in a visa document number is refused: no second check can confirm a repair")
    func visaRefused() throws {
        var lines = Specimen.mrvA
        lines[1] = "L8988901CA" + String(lines[1].dropFirst(10))  // check digit 4 read as A: not a classic confusion
        var r = try MRZReader.read(lines: lines, reference: testReference)
        #expect(!r.isValid)
        lines = Specimen.mrvA
        lines[1] = "L898B901C4" + String(lines[1].dropFirst(10))  // 8 read as B
        r = try MRZReader.read(lines: lines, reference: testReference)
        #expect(!r.isValid && r.failedChecks == [.documentNumber])
        #expect(r.repairs.isEmpty)
    }

    @Test(
        "Invalid zones are flagged with the failing check",
        arguments: [
            (0, 44, MRZCheckID.composite), (9, 7, .documentNumber), (19, 3, .dateOfBirth), (27, 1, .dateOfExpiry),
            (42, 5, .optionalData),
        ])
    func invalidTD3(column: Int, digit: Int, failing: MRZCheckID) throws {
        var bytes = Array(Specimen.td3[1].utf8)
        bytes[column == 0 ? 43 : column] = UInt8(48 + digit % 10)
        let r = try MRZReader.read(
            lines: [Specimen.td3[0], String(decoding: bytes, as: UTF8.self)], reference: testReference)
        #expect(!r.isValid)
        #expect(r.failedChecks.contains(failing))
        if let check = r.checks.first(where: { $0.id == failing }) {
            #expect(!check.passed && check.expected != nil)
        }
    }

    @Test("Impossible dates and a bad sex are problems, not valid results")
    func malformedFields() throws {
        var r = try MRZReader.read(lines: td3With(dob: "741312", expiry: "300101"), reference: testReference)
        #expect(!r.isValid && r.problems.contains { $0.contains("month 13") })
        r = try MRZReader.read(lines: td3With(dob: "740230", expiry: "300101"), reference: testReference)
        #expect(!r.isValid && r.problems.contains { $0.contains("day 30") })
        var lines = Specimen.td3
        lines[1] = lines[1].replacingOccurrences(of: "2F12", with: "2Q12")
        r = try MRZReader.read(lines: lines, reference: testReference)
        #expect(!r.isValid && r.problems.contains { $0.contains("sex") })
    }

    @Test("Text without a zone, or with a zone missing characters, throws a clear error")
    func notFound() throws {
        #expect(throws: OCRIngestError.self) {
            _ = try MRZReader.read("Dear customer, your bill is due.", reference: testReference)
        }
        let short = [Specimen.td3[0], String(Specimen.td3[1].dropLast())]
        #expect {
            _ = try MRZReader.read(lines: short, reference: testReference)
        } throws: { error in
            guard case .mrzLayout(let why) = error as? OCRIngestError else { return false }
            return why.contains("87 characters")
        }
    }
}

@Suite("MRZ robustness")
struct MRZRobustnessTests {
    @Test("Random MRZ-alphabet text never crashes and is never valid by accident")
    func garbage() {
        var rng = SeededGenerator(seed: 3)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<<<<<<<<  \n«")
        var valid = 0
        for _ in 0..<300 {
            let text = String(
                (0..<Int.random(in: 0...200, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? "<" })
            if let r = try? MRZReader.read(text, reference: testReference), r.isValid { valid += 1 }
        }
        #expect(valid == 0)
    }
}

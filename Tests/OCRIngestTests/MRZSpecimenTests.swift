import Foundation
import SanadCore
import Testing

@testable import OCRIngestPlugin

/// The reference date the tests resolve two-digit years against.
let testReference = CivilDate(year: 2026, month: 11, day: 24)!

/// The specimens printed in ICAO Doc 9303 (parts 4–7). Check digits recomputed by hand for each (7-3-1).
enum Specimen {
    static let td3 = [
        "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
        "L898902C36UTO7408122F1204159ZE184226B<<<<<10",
    ]
    static let td1 = [
        "I<UTOD231458907<<<<<<<<<<<<<<<",
        "7408122F1204159UTO<<<<<<<<<<<6",
        "ERIKSSON<<ANNA<MARIA<<<<<<<<<<",
    ]
    /// Part 5's long document number: `<` in the check position, the number and its check digit carried on.
    static let td1LongNumber = [
        "I<UTOD23145890<7349<<<<<<<<<<<",
        "3407127M9507122UTO<<<<<<<<<<<2",
        "STEVENSON<<PETER<JOHN<<<<<<<<<",
    ]
    static let td2 = [
        "I<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<",
        "D231458907UTO7408122F1204159<<<<<<<6",
    ]
    static let mrvA = [
        "V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
        "L8988901C4XXX4009078F96121096ZE184226B<<<<<<",
    ]
    /// Germany's published specimens (Erika Mustermann), as used in peer parsers' test suites: issuer `D<<`,
    /// unspecified sex on the ID card, a `<` personal-number check digit on the passport.
    static let germanID = [
        "IDD<<T220001293<<<<<<<<<<<<<<<",
        "6408125<2010315D<<<<<<<<<<<<<4",
        "MUSTERMANN<<ERIKA<<<<<<<<<<<<<",
    ]
    static let germanPassport = [
        "P<D<<MUSTERMANN<<ERIKA<<<<<<<<<<<<<<<<<<<<<<",
        "C01X00T478D<<6408125F2702283<<<<<<<<<<<<<<<4",
    ]
    static let mrvB = [
        "V<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<",
        "L8988901C4XXX4009078F9612109<<<<<<<<",
    ]
}

@Suite("MRZ specimens (ICAO Doc 9303)")
struct MRZSpecimenTests {
    @Test("TD3 passport specimen: every field and check")
    func td3() throws {
        let r = try MRZReader.read(lines: Specimen.td3, reference: testReference)
        #expect(r.isValid)
        #expect(r.format == .td3)
        #expect(r.documentType == "P")
        #expect(r.issuingState == "UTO")
        #expect(r.issuingStateNote?.contains("Utopia") == true)
        #expect(r.surname == "ERIKSSON")
        #expect(r.givenNames == ["ANNA", "MARIA"])
        #expect(!r.nameIsPossiblyTruncated)
        #expect(r.documentNumber == "L898902C3")
        #expect(r.nationality == "UTO")
        #expect(r.dateOfBirth.iso == "1974-08-12")
        #expect(r.sex == .female)
        #expect(r.dateOfExpiry.iso == "2012-04-15")
        #expect(r.optionalData1 == "ZE184226B")
        #expect(r.checks.map(\.id) == [.documentNumber, .dateOfBirth, .dateOfExpiry, .optionalData, .composite])
        #expect(r.checks.allSatisfy { $0.passed })
        #expect(r.repairs.isEmpty)
        #expect(r.verification(of: .documentNumber) == .checkDigit)
        #expect(r.verification(of: .name) == .fieldType)
    }

    @Test("TD1 identity card specimen")
    func td1() throws {
        let r = try MRZReader.read(lines: Specimen.td1, reference: testReference)
        #expect(r.isValid)
        #expect(r.format == .td1)
        #expect(r.documentType == "I")
        #expect(r.documentNumber == "D23145890")
        #expect(r.surname == "ERIKSSON" && r.givenNames == ["ANNA", "MARIA"])
        #expect(r.dateOfBirth.iso == "1974-08-12" && r.dateOfExpiry.iso == "2012-04-15")
        #expect(r.checks.map(\.id) == [.documentNumber, .dateOfBirth, .dateOfExpiry, .composite])
        #expect(r.verification(of: .optionalData1) == .composite)
    }

    @Test("TD1 long document number carried into the optional data")
    func td1Long() throws {
        let r = try MRZReader.read(lines: Specimen.td1LongNumber, reference: testReference)
        #expect(r.isValid)
        #expect(r.documentNumber == "D23145890734")
        #expect(r.optionalData1 == "")
        #expect(r.sex == .male)
        #expect(r.dateOfBirth.iso == "1934-07-12")
        #expect(r.dateOfExpiry.iso == "1995-07-12")
        #expect(r.surname == "STEVENSON" && r.givenNames == ["PETER", "JOHN"])
    }

    @Test("TD2 specimen")
    func td2() throws {
        let r = try MRZReader.read(lines: Specimen.td2, reference: testReference)
        #expect(r.isValid)
        #expect(r.format == .td2)
        #expect(r.documentNumber == "D23145890")
        #expect(r.checks.map(\.id) == [.documentNumber, .dateOfBirth, .dateOfExpiry, .composite])
    }

    @Test("Visa specimens MRV-A and MRV-B: no composite check, nationality XXX")
    func visas() throws {
        let a = try MRZReader.read(lines: Specimen.mrvA, reference: testReference)
        #expect(a.isValid && a.format == .mrvA)
        #expect(a.documentNumber == "L8988901C" && a.nationality == "XXX")
        #expect(a.dateOfBirth.iso == "1940-09-07" && a.dateOfExpiry.iso == "1996-12-10")
        #expect(a.optionalData1 == "6ZE184226B")
        #expect(a.checks.map(\.id) == [.documentNumber, .dateOfBirth, .dateOfExpiry])
        #expect(a.verification(of: .optionalData1) == MRZVerification.none)
        let b = try MRZReader.read(lines: Specimen.mrvB, reference: testReference)
        #expect(b.isValid && b.format == .mrvB)
        #expect(b.optionalData1 == "")
    }

    @Test("German specimens: D<< issuer, unspecified sex, filler check digit")
    func german() throws {
        let id = try MRZReader.read(lines: Specimen.germanID, reference: testReference)
        #expect(id.isValid && id.format == .td1)
        #expect(id.documentType == "ID" && id.issuingState == "D" && id.nationality == "D")
        #expect(id.documentNumber == "T22000129" && id.sex == .unspecified)
        #expect(id.dateOfBirth.iso == "1964-08-12" && id.dateOfExpiry.iso == "2020-10-31")
        #expect(id.surname == "MUSTERMANN" && id.givenNames == ["ERIKA"])
        #expect(id.issuingStateNote?.contains("Germany") == true)
        let passport = try MRZReader.read(lines: Specimen.germanPassport, reference: testReference)
        #expect(passport.isValid && passport.format == .td3)
        #expect(passport.documentNumber == "C01X00T47" && passport.optionalData1 == "")
        #expect(passport.dateOfExpiry.iso == "2027-02-28")
        #expect(passport.checks.first { $0.id == .optionalData }?.found == "<")
    }

    @Test("Special nationality codes are kept and explained", arguments: ["D<<", "XXA", "XXB", "XXC", "XXX", "UTO"])
    func specialCodes(code: String) throws {
        let line2 = "L898902C36" + code + "7408122F1204159ZE184226B<<<<<1"
        var lines = Specimen.td3
        lines[1] = line2 + String(compositeTD3(line2))
        lines[0] = "P<" + code + String(Specimen.td3[0].dropFirst(5))
        let r = try MRZReader.read(lines: lines, reference: testReference)
        #expect(r.isValid)
        let trimmed = code.replacingOccurrences(of: "<", with: "")
        #expect(r.nationality == trimmed && r.issuingState == trimmed)
        #expect(MRZCountryCodes.special[trimmed] != nil)
        #expect(r.notes.isEmpty)
    }

    @Test("Two-digit years: birth in the past, expiry up to 20 years ahead")
    func years() throws {
        let ref = CivilDate(year: 2026, month: 6, day: 1)!
        // Born 2025-08-12 would be in the future on 2026-06-01? No: 250812 is 2025-08-12, in the past.
        var r = try MRZReader.read(lines: td3With(dob: "250812", expiry: "350415"), reference: ref)
        #expect(r.dateOfBirth.iso == "2025-08-12" && r.dateOfExpiry.iso == "2035-04-15")
        // 260812 is after the reference date: a birth in 1926.
        r = try MRZReader.read(lines: td3With(dob: "260812", expiry: "460415"), reference: ref)
        #expect(r.dateOfBirth.iso == "1926-08-12" && r.dateOfExpiry.iso == "2046-04-15")
        // Expiry 47 years ahead is not plausible: an expired 1947 document.
        r = try MRZReader.read(lines: td3With(dob: "740812", expiry: "470415"), reference: ref)
        #expect(r.dateOfExpiry.iso == "1947-04-15")
        // Unknown day and month of birth.
        r = try MRZReader.read(lines: td3With(dob: "74<<<<", expiry: "300101"), reference: ref)
        #expect(r.isValid)
        #expect(r.dateOfBirth.iso == "1974" && r.dateOfBirth.month == nil)
    }

    @Test("A full name field is flagged as possibly truncated")
    func truncation() throws {
        let name = "P<UTOVANDERHEYDEN<<JOHANNES<MAXIMILIAN<ALEX"
        var lines = Specimen.td3
        lines[0] = name + "A"
        #expect(lines[0].count == 44)
        let r = try MRZReader.read(lines: lines, reference: testReference)
        #expect(r.isValid && r.nameIsPossiblyTruncated)
        #expect(r.surname == "VANDERHEYDEN")
        #expect(r.givenNames == ["JOHANNES", "MAXIMILIAN", "ALEXA"])
    }
}

/// The TD3 composite check digit of a line 2 without its last character.
func compositeTD3(_ line2: String) -> Int {
    let b = Array(line2.utf8)
    return MRZAlphabet.checkDigit(Array(b[0..<10]) + Array(b[13..<20]) + Array(b[21..<43])) ?? -1
}

func checkChar(_ s: String) -> String { String(MRZAlphabet.checkDigit(Array(s.utf8)) ?? 0) }

/// The TD3 specimen with other dates (check digits recomputed).
func td3With(dob: String, expiry: String) -> [String] {
    let body = "L898902C36UTO" + dob + checkChar(dob) + "F" + expiry + checkChar(expiry) + "ZE184226B<<<<<1"
    return [Specimen.td3[0], body + String(compositeTD3(body))]
}

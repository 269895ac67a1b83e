import SanadCore

// The JSON form of an ingested document, as `sanad ingest --json` prints it and the `ingest_document` tool returns
// it. Plugins/OCRIngest/README.md documents the shape.

extension IngestedDocument {
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "documentId": .string(documentID), "kind": .string(kind.rawValue),
            "proposals": .array(proposals.map(\.json)),
        ]
        if let ocr { o["ocr"] = .string(ocr) }
        if let proposalsWithheld { o["proposalsWithheld"] = .string(proposalsWithheld) }
        switch content {
        case .mrz(let zone): o["mrz"] = zone.json
        case .aamva(let barcode): o["aamva"] = barcode.json
        case .text(let chunks): o["chunks"] = .array(chunks.map(\.json))
        }
        return .object(o)
    }
}

extension FieldProposal {
    public var json: JSONValue {
        .object([
            "fieldId": .string(fieldID), "value": .string(value),
            "evidence": .object([
                "documentId": .string(evidence.documentID), "documentKind": .string(evidence.documentKind),
                "sourceField": .string(evidence.sourceField), "repairs": .array(evidence.repairs.map(JSONValue.string)),
                "notes": .array(evidence.notes.map(JSONValue.string)),
            ]),
        ])
    }
}

extension MRZResult {
    public var json: JSONValue {
        func date(_ d: MRZDate) -> JSONValue { d.iso.map(JSONValue.string) ?? .string(d.raw) }
        return .object([
            "format": .string(format.rawValue), "valid": .bool(isValid), "lines": .array(lines.map(JSONValue.string)),
            "documentType": .string(documentType), "issuingState": .string(issuingState),
            "surname": .string(surname), "givenNames": .array(givenNames.map(JSONValue.string)),
            "nameIsPossiblyTruncated": .bool(nameIsPossiblyTruncated), "documentNumber": .string(documentNumber),
            "nationality": .string(nationality), "dateOfBirth": date(dateOfBirth),
            "sex": sex.map { .string($0.rawValue) } ?? .null, "dateOfExpiry": date(dateOfExpiry),
            "optionalData": .array([optionalData1, optionalData2].filter { !$0.isEmpty }.map(JSONValue.string)),
            "checks": .array(
                checks.map { .object(["id": .string($0.id.rawValue), "passed": .bool($0.passed)]) }),
            "repairs": .array(repairs.map { .string($0.description) }),
            "problems": .array(problems.map(JSONValue.string)), "notes": .array(notes.map(JSONValue.string)),
        ])
    }
}

extension AAMVABarcode {
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "iin": .string(header.iin), "version": .number(Double(header.version)),
            "documentKind": documentKind.map(JSONValue.string) ?? .null,
            "warnings": .array(warnings.map(JSONValue.string)),
            "elements": .object(
                Dictionary((primary?.elements ?? []).map { ($0.id, JSONValue.string($0.value)) }) { first, _ in first }),
        ]
        if let issuerJurisdiction { o["jurisdiction"] = .string(issuerJurisdiction) }
        return .object(o)
    }
}

extension OCRTextChunk {
    public var json: JSONValue {
        .object([
            "index": .number(Double(index)), "text": .string(text),
            "sourceBytes": .array([.number(Double(sourceRange.lowerBound)), .number(Double(sourceRange.upperBound))]),
        ])
    }
}

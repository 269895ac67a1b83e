import AbsherData
import SanadChat
import SanadCore

/// The renewal services a proactive alert leads to; the raw value is the deep link's `serviceType`.
public enum AlertServiceType: String, Sendable, CaseIterable, Codable {
    case drivingLicenseRenewal = "driving_license_renewal"
    case passportRenewal = "passport_renewal"
    case nationalIDRenewal = "national_id_renewal"

    /// The alert's title (`رخصة قيادتك على وشك الانتهاء`).
    public var title: String {
        switch self {
        case .drivingLicenseRenewal: return "رخصة قيادتك على وشك الانتهاء"
        case .passportRenewal: return "جواز سفرك على وشك الانتهاء"
        case .nationalIDRenewal: return "هويتك الوطنية على وشك الانتهاء"
        }
    }

    /// The alert's title once the document has expired (`رخصة قيادتك منتهية`).
    public var overdueTitle: String {
        switch self {
        case .drivingLicenseRenewal: return "رخصة قيادتك منتهية"
        case .passportRenewal: return "جواز سفرك منتهي"
        case .nationalIDRenewal: return "هويتك الوطنية منتهية"
        }
    }

    /// The service's name (`تجديد رخصة القيادة`).
    public var serviceName: String {
        switch self {
        case .drivingLicenseRenewal: return "تجديد رخصة القيادة"
        case .passportRenewal: return "تجديد جواز السفر"
        case .nationalIDRenewal: return "تجديد الهوية الوطنية"
        }
    }

    /// The document's name (`رخصة القيادة`).
    public var documentName: String {
        switch self {
        case .drivingLicenseRenewal: return "رخصة القيادة"
        case .passportRenewal: return "جواز السفر"
        case .nationalIDRenewal: return "الهوية الوطنية"
        }
    }

    /// Whether the document's name is grammatically feminine (رخصة، هوية) or not (جواز), for verb agreement.
    public var isFeminine: Bool { self != .passportRenewal }

    /// Wordings that name the document, for the grounding check (the title, the document's name, the possessive).
    public var documentWordings: [String] {
        switch self {
        case .drivingLicenseRenewal: return [title, overdueTitle, documentName, "رخصة قيادتك", "رخصة قيادة"]
        case .passportRenewal: return [title, overdueTitle, documentName, "جواز سفرك", "جواز سفر", "الجواز"]
        case .nationalIDRenewal: return [title, overdueTitle, documentName, "هويتك الوطنية", "هويتك", "الهوية"]
        }
    }
}

/// An alert for a document that expires within the window, or has expired (overdue: negative days).
public struct ProactiveAlert: Sendable, Equatable {
    /// The alert id (the document's id).
    public var id: String
    public var serviceType: AlertServiceType
    public var document: UserDocument
    /// Days from today to the expiry date (0 = expires today; negative = expired that many days ago).
    public var daysRemaining: Int

    public init(id: String, serviceType: AlertServiceType, document: UserDocument, daysRemaining: Int) {
        self.id = id
        self.serviceType = serviceType
        self.document = document
        self.daysRemaining = daysRemaining
    }

    public var isOverdue: Bool { daysRemaining < 0 }

    /// `رخصة قيادتك على وشك الانتهاء`, or `رخصة قيادتك منتهية` once it has expired.
    public var title: String { isOverdue ? serviceType.overdueTitle : serviceType.title }

    /// `{serviceType, title, alertId}` of this alert.
    public var deepLink: DeepLink {
        DeepLink(serviceType: serviceType.rawValue, title: title, alertId: id)
    }

    /// The alert as JSON for tools.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "alertId": .string(id), "serviceType": .string(serviceType.rawValue), "title": .string(title),
            "service": .string(serviceType.serviceName), "daysRemaining": .number(Double(daysRemaining)),
            "expiryDate": .string(document.expiryDate.description),
            "url": .string(deepLink.url(AbsherSettings.linkFormat)),
            "chip": .string(ProactiveAlertsPlugin.chipPrefix + title),
        ]
        if let n = document.number { o["documentNumber"] = .string(n) }
        if let f = document.renewalFeeSAR { o["renewalFeeSAR"] = .number(Double(f)) }
        return .object(o)
    }
}

/// The active alerts: every expired document (an overdue alert, never dropped) and the documents expiring in
/// `0...windowDays` days from `today`; the most overdue first, then the soonest (documents with the same date keep
/// their order in the file).
public func deriveAlerts(from documents: [UserDocument], today: CivilDate, windowDays: Int) -> [ProactiveAlert] {
    let alerts = documents.enumerated().compactMap { offset, doc -> (Int, ProactiveAlert)? in
        let days = today.days(until: doc.expiryDate)
        guard days <= windowDays else { return nil }
        return (
            offset, ProactiveAlert(id: doc.id, serviceType: doc.type.renewalService, document: doc, daysRemaining: days)
        )
    }
    return alerts.sorted { a, b in
        a.1.daysRemaining != b.1.daysRemaining ? a.1.daysRemaining < b.1.daysRemaining : a.0 < b.0
    }.map(\.1)
}

extension DocumentType {
    /// The renewal service an expiring document of this kind leads to.
    public var renewalService: AlertServiceType {
        switch self {
        case .drivingLicense: return .drivingLicenseRenewal
        case .passport: return .passportRenewal
        case .nationalID: return .nationalIDRenewal
        }
    }
}

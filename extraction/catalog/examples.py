"""One example clause per catalog type, written by us (not taken from any contract).

An example reads like the passage a reviewer looks for, so its embedding and its words meet a
contract's own wording better than a question or a keyword list does. Retrieval searches it as
one more query variant (``extraction.retrieval``); admins can edit it per type.
"""

EXAMPLES: dict[str, str] = {
    "Indemnification": (
        "Supplier shall indemnify, defend and hold harmless Customer and its officers, directors and "
        "employees from and against all losses, damages, costs and reasonable attorneys' fees arising out of "
        "any third-party claim caused by Supplier's breach of this Agreement or negligence."
    ),
    "Termination": (
        "Either party may terminate this Agreement upon written notice if the other party materially breaches"
        " it and fails to cure the breach within thirty (30) days after receiving notice, or becomes "
        "insolvent."
    ),
    "Payment": (
        "Customer shall pay Supplier a fee of $4,500.00 per month for the Services, invoiced monthly and"
        " payable within thirty (30) days of receipt of each invoice."
    ),
    "IP": (
        "Each party retains all right, title and interest in its pre-existing intellectual property, and "
        "nothing in this Agreement transfers ownership of any patent, copyright or trademark."
    ),
    "Other": (
        "Notwithstanding anything to the contrary in this Agreement, Customer shall bear the cost of any "
        "regulatory change that affects the Services."
    ),
    "Document Name": "DISTRIBUTION AGREEMENT",
    "Parties": (
        'This Agreement is made by and between Acme Corporation, a Delaware corporation ("Company"), and Beta'
        ' Holdings Ltd., a company organised under the laws of England ("Distributor").'
    ),
    "Agreement Date": "This Agreement is dated as of March 1, 2019.",
    "Effective Date": (
        "This Agreement shall become effective on the date on which it has been signed by both parties (the "
        '"Effective Date").'
    ),
    "Expiration Date": (
        "The term of this Agreement shall commence on the Effective Date and shall continue for a period of "
        "five (5) years, unless terminated earlier in accordance with its terms."
    ),
    "Renewal Term": (
        "Thereafter, this Agreement shall automatically renew for successive one-year periods unless either "
        "party notifies the other of its intention not to renew."
    ),
    "Notice Period To Terminate Renewal": (
        "Either party may elect not to renew this Agreement by giving written notice to the other party at "
        "least ninety (90) days before the end of the then-current term."
    ),
    "Governing Law": (
        "This Agreement shall be governed by and construed in accordance with the laws of the State of New "
        "York, without giving effect to its conflict of laws provisions."
    ),
    "Most Favored Nation": (
        "If Supplier sells the Products to any other customer at a lower price or on more favorable terms, "
        "Supplier shall promptly offer the same price and terms to Customer."
    ),
    "Non-Compete": (
        "During the Term and for two years thereafter, Distributor shall not manufacture, sell or promote any"
        " product that competes with the Products in the Territory."
    ),
    "Exclusivity": (
        "Company appoints Distributor as its exclusive distributor of the Products in the Territory, and "
        "Company shall not appoint any other distributor or sell the Products directly to customers in the "
        "Territory."
    ),
    "No-Solicit Of Customers": (
        "For one year after termination, neither party shall solicit any customer of the other party or "
        "induce it to reduce or end its business with the other party."
    ),
    "Competitive Restriction Exception": (
        "Notwithstanding the foregoing, the restrictions in this Section shall not apply to the ownership of "
        "less than five percent of the shares of a publicly traded company or to products acquired through an"
        " acquisition."
    ),
    "No-Solicit Of Employees": (
        "During the Term and for twelve months thereafter, neither party shall solicit for employment or hire"
        " any employee of the other party, except through general advertisements not targeted at such "
        "employees."
    ),
    "Non-Disparagement": (
        "Neither party shall make any public statement that disparages or is derogatory of the other party, "
        "its products, officers or employees."
    ),
    "Termination For Convenience": (
        "Either party may terminate this Agreement at any time, without cause, upon thirty (30) days' prior "
        "written notice to the other party."
    ),
    "Rofr/Rofo/Rofn": (
        "Before selling or licensing the Product rights to any third party, Company shall first offer such "
        "rights to Partner, and Partner shall have thirty days to accept the offer on the same terms."
    ),
    "Change Of Control": (
        "If a party undergoes a change of control, merges with another entity or sells all or substantially "
        "all of its assets, the other party may terminate this Agreement upon written notice."
    ),
    "Anti-Assignment": (
        "Neither party may assign or transfer this Agreement or any of its rights or obligations without the "
        "prior written consent of the other party, and any attempted assignment without such consent shall be"
        " void."
    ),
    "Revenue/Profit Sharing": (
        "Licensee shall pay Licensor a royalty equal to five percent (5%) of Net Sales of all Licensed "
        "Products sold during each calendar quarter."
    ),
    "Price Restrictions": (
        "The prices set forth in Exhibit A shall remain fixed during the first year, and thereafter Supplier "
        "may not increase them by more than three percent per year."
    ),
    "Minimum Commitment": (
        "Distributor shall purchase from Company Products having an aggregate value of at least $500,000 "
        'during each Contract Year (the "Minimum Purchase Requirement").'
    ),
    "Volume Restriction": (
        "Customer may use the Software for up to 100 named users; any use above that number requires the "
        "purchase of additional licenses at the then-current fees."
    ),
    "Ip Ownership Assignment": (
        "All inventions, works of authorship and deliverables created by Consultant under this Agreement "
        "shall be the sole property of Company, and Consultant hereby assigns to Company all right, title and"
        " interest therein."
    ),
    "Joint Ip Ownership": (
        "Any invention conceived jointly by employees of both parties shall be jointly owned by the parties, "
        "and each party may exploit it without accounting to the other."
    ),
    "License Grant": (
        "Licensor hereby grants to Licensee a non-exclusive license to use, reproduce and distribute the "
        "Licensed Software in the Territory during the Term."
    ),
    "Non-Transferable License": (
        "The license granted herein is personal to Licensee and is non-transferable, and Licensee may not "
        "sublicense or assign it to any third party."
    ),
    "Affiliate License-Licensor": (
        "Licensor, on behalf of itself and its Affiliates, grants Licensee a license under the patents and "
        "know-how owned or controlled by Licensor or any of its Affiliates."
    ),
    "Affiliate License-Licensee": (
        "The license granted in this Section extends to Licensee's Affiliates, which may exercise the "
        "licensed rights on the same terms as Licensee."
    ),
    "Unlimited/All-You-Can-Eat-License": (
        "Customer may install and use an unlimited number of copies of the Software at all of its sites "
        "without any additional license fee."
    ),
    "Irrevocable Or Perpetual License": (
        "Company grants Customer a perpetual, irrevocable, worldwide, fully paid-up license to use the "
        "Deliverables, which shall survive any termination of this Agreement."
    ),
    "Source Code Escrow": (
        "Licensor shall deposit the source code of the Software with an escrow agent, to be released to "
        "Licensee if Licensor becomes insolvent or ceases to support the Software."
    ),
    "Post-Termination Services": (
        "Upon termination or expiration of this Agreement, Distributor may sell off its remaining inventory "
        "for six months, and Supplier shall continue to provide support and transition assistance to "
        "customers."
    ),
    "Audit Rights": (
        "Company may, upon reasonable notice and during normal business hours, inspect and audit the books "
        "and records of Distributor relating to this Agreement, at its own expense."
    ),
    "Uncapped Liability": (
        "The foregoing limitation of liability shall not apply to a party's indemnification obligations, "
        "breach of confidentiality, gross negligence or willful misconduct."
    ),
    "Cap On Liability": (
        "In no event shall either party's aggregate liability under this Agreement exceed the total fees paid"
        " by Customer in the twelve (12) months preceding the claim."
    ),
    "Liquidated Damages": (
        "If Supplier fails to deliver on time, it shall pay Customer as liquidated damages, and not as a "
        "penalty, an amount equal to one percent of the price for each week of delay."
    ),
    "Warranty Duration": (
        "Supplier warrants that the Products will be free from defects in materials and workmanship for a "
        "period of twelve (12) months from the date of delivery."
    ),
    "Insurance": (
        "Distributor shall maintain, at its own expense, commercial general liability and product liability "
        "insurance with limits of not less than $1,000,000 per occurrence and shall name Company as an "
        "additional insured."
    ),
    "Covenant Not To Sue": (
        "Licensee shall not contest or challenge the validity of the Licensed Patents or Licensor's ownership"
        " of the Trademarks, or bring any claim against Licensor in respect of them."
    ),
    "Third Party Beneficiary": (
        "Nothing in this Agreement is intended to confer any rights or remedies on any person other than the "
        "parties and their respective successors and permitted assigns."
    ),
}

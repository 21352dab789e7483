from ingest.doctype import classify, type_in


def test_the_title_names_the_type():
    assert classify("EXCLUSIVE DISTRIBUTOR AGREEMENT\n\nThis Agreement is made ...") == "Distributor"
    assert classify("Page 1\n\nMutual Non-Disclosure Agreement\n\nThe parties ...") == "Non-Disclosure"
    assert classify("# WEB SITE HOSTING AGREEMENT\n\n...") == "Hosting"


def test_the_head_of_a_compound_title_wins():
    assert type_in("Trademark License") == "License"
    assert type_in("Licence and Maintenance") == "Maintenance"
    assert type_in("Co-Branding") == "Co-Branding"


def test_services_name_the_type_only_when_nothing_more_particular_does():
    assert type_in("Transportation Services") == "Transportation"
    assert type_in("Hosting Services") == "Hosting"
    assert type_in("Master Services") == "Service"
    assert type_in("Remarketing") == "Marketing"


def test_a_line_of_running_text_is_no_title():
    scanned = (
        "EQUIPMENT LEASE AGREEMENT\n\nThis Equipment Lease Agreement is entered into as of March 3, 2025\n"
        "by and between Northfield Rail Services GmbH and Calder Freight Logistics Ltd.\n"
        "Lessee shall operate not fewer than thirty units\n"
        "on the Lessor's maintenance programme during each contract year.\n"
    )
    assert classify(scanned) == "Lease"  # its title; no word of the body makes another type
    cited = "WHEREAS, the parties entered into that certain Domain Name License Agreement dated May 1, 2019;"
    assert classify(f"AMENDMENT NO. 1\n\n{cited}") == "License"  # a name right before "Agreement" still is


def test_without_a_title_the_sentence_that_names_the_agreement_is_read():
    text = 'Between Acme Corp. and Beta Ltd.\nThis Sponsorship Agreement (the "Agreement") is entered into as of May 1.'
    assert classify(text) == "Sponsorship"


def test_no_type_is_made_up():
    assert classify("Minutes of the board meeting held on 3 May 2021.\n\nPresent: the directors.") is None
    assert classify("") is None


def test_a_title_broken_before_agreement_reads_the_line_above():
    assert (
        classify("EXCLUSIVE SUPPLY\nAGREEMENT\n\nThis Agreement is made with a distributor ...") == "Supply"
    )


def test_a_title_that_starts_with_contract_reads_the_words_before_agreement():
    # "Contract" opens the title here; the type is named between it and "Agreement"
    assert (
        classify("CONTRACT MANUFACTURING AGREEMENT\n\nThis Agreement is made on May 1, 2020 ...")
        == "Manufacturing"
    )
    assert classify("Contract Services Agreement\n\nThis Agreement is made ...") == "Service"
    assert classify("AGREEMENT AND PLAN OF MERGER\n\nThis Agreement is made ...") is None


def test_buying_shares_or_a_business_is_not_a_supply_contract():
    for title in (
        "STOCK PURCHASE AGREEMENT",
        "Asset Purchase Agreement",
        "SECURITIES PURCHASE AGREEMENT",
        "Share Purchase Agreement",
        "Membership Interest Purchase Agreement",
        "Note Purchase Agreement",
    ):
        assert classify(f"{title}\n\nThis Agreement is made on May 1, 2020 ...") is None, title
    assert classify("MASTER PURCHASE AGREEMENT\n\nThis Agreement is made ...") == "Supply"
    assert classify("Purchase and Supply Agreement\n\n...") == "Supply"


def test_a_lease_titled_without_agreement_is_a_lease():
    assert classify("# WAREHOUSE LEASE\n\nThis Lease is dated 1 July 2025 ...") == "Lease"
    assert classify("DEED OF LEASE\n\nThis Deed is made ...") == "Lease"
    assert classify("Tenant shall repair the Premises under this Lease\n\nand the Landlord ...") is None
    assert type_in("Equipment Lease") == "Lease"
    assert classify("MASTER AGREEMENT\n\n12. Equipment Lease\n\nSupplier may lease the tools ...") is None

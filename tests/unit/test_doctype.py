from ingest.doctype import classify, type_in


def test_the_title_names_the_type():
    assert classify("EXCLUSIVE DISTRIBUTOR AGREEMENT\n\nThis Agreement is made ...") == "Distributor"
    assert classify("Page 1\n\nMutual Non-Disclosure Agreement\n\nThe parties ...") == "Non-Disclosure"
    assert classify("# WEB SITE HOSTING AGREEMENT\n\n...") == "Hosting"


def test_the_head_of_a_compound_title_wins():
    assert type_in("Trademark License") == "License"
    assert type_in("Licence and Maintenance") == "Maintenance"
    assert type_in("Co-Branding") == "Co-Branding"


def test_without_a_title_the_sentence_that_names_the_agreement_is_read():
    text = "Between Acme Corp. and Beta Ltd.\nThis Sponsorship Agreement (the \"Agreement\") is entered into as of May 1."
    assert classify(text) == "Sponsorship"


def test_no_type_is_made_up():
    assert classify("Minutes of the board meeting held on 3 May 2021.\n\nPresent: the directors.") is None
    assert classify("") is None


def test_a_title_broken_before_agreement_reads_the_line_above():
    assert classify("EXCLUSIVE SUPPLY\nAGREEMENT\n\nThis Agreement is made with a distributor ...") == "Supply"

-- 004's address book, verbatim; the report filled it with 100,000 rows from a dummy-data
-- generator (kazina.com), here generated rows of the same types and widths
CREATE SEQUENCE addrbook_id_seq;
CREATE TABLE addrbook (
  id          bigint PRIMARY KEY DEFAULT nextval('addrbook_id_seq'::regclass),
  name        character varying(32),
  kana        character varying(32),
  email       character varying(64),
  gender      character(1),
  age         integer,
  birthday    date,
  marriage    character(2),
  blood_type  character(3),
  division    character varying(4),
  phone_no    character varying(12),
  mobile_no   character varying(13),
  carrier     character varying(10),
  note        text
);
INSERT INTO addrbook (name, kana, email, gender, age, birthday, marriage, blood_type,
                      division, phone_no, mobile_no, carrier, note)
SELECT 'name ' || i, 'kana ' || i, 'user' || i || '@example.com', (i % 2)::text, 20 + i % 50,
       date '1950-01-01' + i % 20000, (i % 2)::text, (ARRAY['A', 'B', 'O', 'AB'])[1 + i % 4],
       (i % 47)::text, '03' || lpad((i % 100000000)::text, 8, '0'),
       '090' || lpad(i::text, 8, '0'), (ARRAY['docomo', 'au', 'SoftBank'])[1 + i % 3],
       md5(i::text)
FROM generate_series(1, 100000) AS i;
SELECT setval('addrbook_id_seq', 100000);
ANALYZE addrbook;

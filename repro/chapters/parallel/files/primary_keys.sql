-- Primary keys only, as in the original (no other index).
alter table date_dim add primary key (d_date_sk);
alter table customer_address add primary key (ca_address_sk);
alter table customer_demographics add primary key (cd_demo_sk);
alter table customer add primary key (c_customer_sk);
alter table store_sales add primary key (ss_item_sk, ss_ticket_number);
alter table web_sales add primary key (ws_item_sk, ws_order_number);
alter table catalog_sales add primary key (cs_item_sk, cs_order_number);

# Builds the release binaries: the portal (`paydesk`) and the sandbox
# (`paydesk-sandbox`).
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin paydesk --bin paydesk-sandbox

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/paydesk /usr/local/bin/paydesk
COPY --from=build /src/target/release/paydesk-sandbox /usr/local/bin/paydesk-sandbox
ENV PAYDESK_LISTEN=0.0.0.0:8080
EXPOSE 8080
CMD ["paydesk"]

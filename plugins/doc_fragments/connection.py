# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connection and authentication options, in a module flavour and a plugin flavour (env and vars)."""

from __future__ import annotations


class ModuleDocFragment(object):
    """Use as C(modelarts.training.connection) in modules and C(modelarts.training.connection.plugins) in lookups."""

    # Module flavour: the environment variables are read through env_fallback.
    DOCUMENTATION = r"""
options:
  region:
    description:
      - Huawei Cloud region, for example C(cn-north-4).
      - Derives the default O(endpoint) and O(iam_endpoint), and names the project looked up when O(project_id) is not set.
      - No request carries it (the signature does not include a region). With O(endpoint) and O(project_id) given it chooses
        nothing, and a warning says so when it was given apart from them or the endpoint's host is in another region.
      - If not set, the value of the E(HUAWEICLOUD_SDK_REGION) environment variable is used.
    type: str
  project_id:
    description:
      - ID of the project that owns the training jobs.
      - When absent it is resolved from O(region) through IAM (C(GET /v3/projects?name=<region>)); the task fails
        when no project or several projects match.
      - If not set, the value of the E(HUAWEICLOUD_SDK_PROJECT_ID) environment variable is used.
    type: str
  access_key:
    description:
      - Access key ID for AK/SK request signing (C(SDK-HMAC-SHA256)). Needs O(secret_key).
      - Exactly one credential kind may be set per task; AK/SK, O(auth_token), or O(username)/O(password)/O(domain_name).
      - If not set, the value of the E(HUAWEICLOUD_SDK_AK) environment variable is used.
    type: str
  secret_key:
    description:
      - Secret access key for AK/SK request signing. Never logged nor shown.
      - If not set, the value of the E(HUAWEICLOUD_SDK_SK) environment variable is used.
    type: str
  security_token:
    description:
      - Security token of temporary AK/SK credentials; sent as a signed C(X-Security-Token) header.
      - If not set, the value of the E(HUAWEICLOUD_SDK_SECURITY_TOKEN) environment variable is used.
    type: str
  auth_token:
    description:
      - A pre-issued IAM token, sent as C(X-Auth-Token). It is not renewed; an expired token fails the task.
      - If not set, the value of the E(HUAWEICLOUD_SDK_AUTH_TOKEN) environment variable is used.
    type: str
  username:
    description:
      - IAM user name for password authentication (C(POST /v3/auth/tokens)); needs O(password) and O(domain_name).
      - The token is reused until shortly before it expires and renewed once when the service refuses it.
      - If not set, the value of the E(HUAWEICLOUD_USERNAME) environment variable is used.
    type: str
  password:
    description:
      - IAM user password for password authentication.
      - If not set, the value of the E(HUAWEICLOUD_PASSWORD) environment variable is used.
    type: str
  domain_name:
    description:
      - IAM account (domain) name of O(username).
      - If not set, the value of the E(HUAWEICLOUD_DOMAIN_NAME) environment variable is used.
    type: str
  credentials_file:
    description:
      - The official SDK's credentials file (INI, section C([basic])) with C(ak), C(sk) and optional C(security_token), C(project_id),
        C(iam_endpoint); or C(idp_id) and C(id_token_file) for a federated identity, whose temporary credentials are renewed.
      - Given here, it is a credential kind like the others. When no credential is given anywhere, the file named by
        E(HUAWEICLOUD_SDK_CREDENTIALS_FILE), else C(~/.huaweicloud/credentials) when it exists, is the first source tried,
        then CCE pod identity, then the ECS/BMS instance metadata (see the notes).
    type: path
  idp_id:
    description:
      - ID of the IAM identity provider that trusts the id token in O(id_token_file) (a CI job's OIDC token).
      - The token is exchanged at IAM (C(POST /v3.0/OS-AUTH/id-token/tokens)), then for temporary AK/SK
        (C(POST /v3.0/OS-CREDENTIAL/securitytokens)); they are renewed before they expire, reading the file again each time.
      - If not set, the value of the E(HUAWEICLOUD_SDK_IDP_ID) environment variable is used.
    type: str
  id_token_file:
    description:
      - File holding the id token of O(idp_id); read again at every exchange, so a CI system may rotate it.
      - If not set, the value of the E(HUAWEICLOUD_SDK_ID_TOKEN_FILE) environment variable is used.
    type: path
  oidc_provider_urn:
    description:
      - URN of the OIDC identity provider for STS v5 C(assume-with-oidc); needs O(oidc_agency_urn) and an id token
        (O(oidc_token_file) or O(oidc_id_token)). The temporary credentials are renewed before they expire.
      - If not set, the value of the E(HUAWEICLOUD_OIDC_PROVIDER_URN) environment variable is used.
    type: str
  oidc_agency_urn:
    description:
      - URN of the agency assumed with the OIDC id token.
      - If not set, the value of the E(HUAWEICLOUD_OIDC_AGENCY_URN) environment variable is used.
    type: str
  oidc_token_file:
    description:
      - File holding the OIDC id token; read again at every renewal.
      - If not set, the value of the E(HUAWEICLOUD_OIDC_TOKEN_FILE) environment variable is used.
    type: path
  oidc_id_token:
    description:
      - The OIDC id token itself; wins over O(oidc_token_file) given at the same level. Never logged nor shown.
      - If not set, the value of the E(HUAWEICLOUD_OIDC_ID_TOKEN) environment variable is used.
    type: str
  oidc_session_name:
    description:
      - Session name of the assumed agency (default C(oidc-sts-session)).
      - Only tunes the OIDC kind; it selects no credential kind (beside AK/SK it is ignored).
      - If not set, the value of the E(HUAWEICLOUD_OIDC_SESSION_NAME) environment variable is used.
    type: str
  oidc_duration_seconds:
    description:
      - Lifetime asked for the OIDC temporary credentials, 900 to 43200 seconds (default 3600).
      - Only tunes the OIDC kind; it selects no credential kind (beside AK/SK it is ignored).
      - If not set, the value of the E(HUAWEICLOUD_OIDC_DURATION_SECONDS) environment variable is used.
    type: int
  agency_name:
    description:
      - An agency to assume on top of any credentials (IAM C(assume_role)); needs O(agency_domain_name).
      - The assumed credentials are renewed before they expire.
    type: str
  agency_domain_name:
    description:
      - Name of the account that created O(agency_name).
    type: str
  agency_duration:
    description:
      - Lifetime asked for the agency's credentials, 900 to 86400 seconds (default 3600).
    type: int
  sts_endpoint:
    description:
      - STS endpoint URL for O(oidc_provider_urn). Defaults to C(https://sts.<region>.myhuaweicloud.com) for the regions
        of the official SDK's region map, and cn-north-4's for the others only when O(endpoint) and O(iam_endpoint) are
        not set; with either set, or without O(region), the id token is never sent to a derived host of another region, and
        O(sts_endpoint) must be set.
      - If not set, the value of the E(HUAWEICLOUD_SDK_STS_ENDPOINT) environment variable is used.
    type: str
  endpoint:
    description:
      - ModelArts endpoint URL. Defaults to C(https://modelarts.<region>.myhuaweicloud.com).
      - If not set, the value of the E(HUAWEICLOUD_MODELARTS_ENDPOINT) environment variable is used.
    type: str
  iam_endpoint:
    description:
      - IAM endpoint URL. Defaults to C(https://iam.<region>.myhuaweicloud.com).
      - If not set, the value of the E(HUAWEICLOUD_SDK_IAM_ENDPOINT) environment variable is used.
    type: str
  validate_certs:
    description:
      - Whether to verify the TLS certificates of the endpoints. Only turn this off for testing (a warning says so).
      - If not set, the value of the E(HUAWEICLOUD_VALIDATE_CERTS) environment variable is used; when neither is set,
        certificates are verified (V(true)). A value that is not a boolean fails the task, naming where it came from.
    type: bool
  ca_bundle:
    description:
      - PEM file of the certificate authorities to trust.
      - Wins over E(REQUESTS_CA_BUNDLE) and E(CURL_CA_BUNDLE).
      - If not set, the value of the E(HUAWEICLOUD_CA_BUNDLE) environment variable is used.
    type: path
  proxy:
    description:
      - Proxy URL for all requests, for example C(http://proxy.example.com:3128); it applies to every host, E(NO_PROXY) or not, as an
        explicit proxy does in the C(requests) library.
      - When not set, the standard E(HTTPS_PROXY), E(HTTP_PROXY), E(ALL_PROXY) and E(NO_PROXY) environment variables are honoured.
      - Instance metadata (E(HUAWEICLOUD_METADATA_ENDPOINT)) and CCE pod identity (E(HC_CONTAINER_CREDENTIALS_FULL_URI)) are always
        reached directly, never through this proxy or the environment's.
      - Its C(user:password) part is masked everywhere (results, invocation, messages); the rest stays visible for debugging.
      - Percent-encode the reserved characters of the user name and password (C(/) as C(%2F), C(@) as C(%40), C(#) as C(%23),
        C(?) as C(%3F), C(%) as C(%25)), for example C(http://user:pa%2Fss@proxy:3128); a URL the HTTP library would read
        otherwise is refused before any request, without being quoted.
    type: str
  connect_timeout:
    description:
      - Seconds to wait for a connection to be established.
    type: float
    default: 10
  request_timeout:
    description:
      - Seconds to wait for a response once connected.
    type: float
    default: 30
  backoff_retries:
    description:
      - How many times a request is retried after HTTP 429, 500, 502, 503, 504, a connection error, a timeout or an unreadable answer.
      - Other errors are never retried. Retries never run past the task's deadline.
    type: int
    default: 4
  backoff_delay:
    description:
      - Base delay in seconds of the full-jitter exponential backoff; the delay before retry N is random between 0 and
        O(backoff_delay) * 2^N, capped by O(backoff_max_delay). A C(Retry-After) header from the service is used instead when present.
    type: float
    default: 1
  backoff_max_delay:
    description:
      - Upper bound in seconds of one backoff delay.
      - Without C(wait), one request (its retries included) ends within
        (O(backoff_retries) + 1) * (O(connect_timeout) + O(request_timeout)) + O(backoff_retries) * O(backoff_max_delay) seconds;
        a C(Retry-After) longer than the time left ends the retries at once.
    type: float
    default: 30
  max_response_bytes:
    description:
      - Largest response body accepted, in bytes. Job documents are kilobytes; the C(node_count_metrics) of a job that ran for
        weeks can reach a few MiB. A larger answer fails with the size received.
      - The pages of one search count together, within 8 times this size (a page alone within it).
    type: int
    default: 33554432
notes:
  - "Precedence, highest first: options on the task (C(module_defaults) included), then the HUAWEICLOUD_* environment variables.
    Each option takes the first value set. The credential kind comes from the first of these that names any credential
    option, so a task's O(auth_token) replaces E(HUAWEICLOUD_SDK_AK)/E(HUAWEICLOUD_SDK_SK) of the runner; two kinds given at
    the same level conflict. O(security_token) is only taken from where O(access_key) came from."
  - Credentials are checked before any request is sent; conflicting or incomplete credentials fail the task and name the options
    and environment variables involved.
  - "When no level names any credential option, credentials are looked for where hosts keep them: the SDK credentials file
    (E(HUAWEICLOUD_SDK_CREDENTIALS_FILE), else C(~/.huaweicloud/credentials)), then CCE pod identity
    (E(HC_CONTAINER_CREDENTIALS_FULL_URI) and E(HC_CONTAINER_AUTHORIZATION_TOKEN_FILE)), then the ECS/BMS instance metadata
    (E(HUAWEICLOUD_METADATA_ENDPOINT), default C(http://169.254.169.254)) with a short connect timeout, unless
    E(HUAWEICLOUD_METADATA_DISABLED) is V(true). If none serves, one error names every source tried and why it was skipped."
  - Credentials the collection obtains (federated, OIDC, pod identity, instance metadata, agency, IAM password tokens) are renewed
    when less than 5 minutes or a third of their lifetime remains, and once when the service refuses them.
  - Secrets (O(secret_key), O(security_token), O(auth_token), O(password), O(oidc_id_token), id and pod tokens, and credentials
    or tokens obtained from IAM, STS or the metadata service) never appear in results, error messages or logs.
requirements:
  - requests
  - jsonschema
"""

    # Plugin flavour: lookups read options from keywords, environment variables and inventory variables.
    PLUGINS = r"""
options:
  region:
    description:
      - Huawei Cloud region, for example C(cn-north-4).
      - Derives the default O(endpoint) and O(iam_endpoint), and names the project looked up when O(project_id) is not set.
      - No request carries it (the signature does not include a region). With O(endpoint) and O(project_id) given it chooses
        nothing, and a warning says so when it was given apart from them or the endpoint's host is in another region.
    type: str
    env:
      - name: HUAWEICLOUD_SDK_REGION
    vars:
      - name: modelarts_region
  project_id:
    description:
      - ID of the project that owns the training jobs.
      - When absent it is resolved from O(region) through IAM; the lookup fails when no project or several projects match.
    type: str
    env:
      - name: HUAWEICLOUD_SDK_PROJECT_ID
    vars:
      - name: modelarts_project_id
  access_key:
    description:
      - Access key ID for AK/SK request signing (C(SDK-HMAC-SHA256)). Needs O(secret_key).
      - Exactly one credential kind may be set; AK/SK, O(auth_token), or O(username)/O(password)/O(domain_name).
    type: str
    env:
      - name: HUAWEICLOUD_SDK_AK
    vars:
      - name: modelarts_access_key
  secret_key:
    description:
      - Secret access key for AK/SK request signing. Never logged nor shown.
    type: str
    env:
      - name: HUAWEICLOUD_SDK_SK
    vars:
      - name: modelarts_secret_key
  security_token:
    description:
      - Security token of temporary AK/SK credentials; sent as a signed C(X-Security-Token) header.
    type: str
    env:
      - name: HUAWEICLOUD_SDK_SECURITY_TOKEN
    vars:
      - name: modelarts_security_token
  auth_token:
    description:
      - A pre-issued IAM token, sent as C(X-Auth-Token). It is not renewed.
    type: str
    env:
      - name: HUAWEICLOUD_SDK_AUTH_TOKEN
    vars:
      - name: modelarts_auth_token
  username:
    description:
      - IAM user name for password authentication; needs O(password) and O(domain_name).
    type: str
    env:
      - name: HUAWEICLOUD_USERNAME
    vars:
      - name: modelarts_username
  password:
    description:
      - IAM user password for password authentication.
    type: str
    env:
      - name: HUAWEICLOUD_PASSWORD
    vars:
      - name: modelarts_password
  domain_name:
    description:
      - IAM account (domain) name of O(username).
    type: str
    env:
      - name: HUAWEICLOUD_DOMAIN_NAME
    vars:
      - name: modelarts_domain_name
  credentials_file:
    description:
      - The official SDK's credentials file (INI, section C([basic])) with C(ak), C(sk) and optional C(security_token), C(project_id),
        C(iam_endpoint); or C(idp_id) and C(id_token_file) for a federated identity, whose temporary credentials are renewed.
      - Given here, it is a credential kind like the others. When no credential is given anywhere, the file named by
        E(HUAWEICLOUD_SDK_CREDENTIALS_FILE), else C(~/.huaweicloud/credentials) when it exists, is the first source tried,
        then CCE pod identity, then the ECS/BMS instance metadata (see the notes).
    type: path
    vars:
      - name: modelarts_credentials_file
  idp_id:
    description:
      - ID of the IAM identity provider that trusts the id token in O(id_token_file) (a CI job's OIDC token).
      - The token is exchanged at IAM (C(POST /v3.0/OS-AUTH/id-token/tokens)), then for temporary AK/SK
        (C(POST /v3.0/OS-CREDENTIAL/securitytokens)); they are renewed before they expire, reading the file again each time.
    type: str
    env:
      - name: HUAWEICLOUD_SDK_IDP_ID
    vars:
      - name: modelarts_idp_id
  id_token_file:
    description:
      - File holding the id token of O(idp_id); read again at every exchange, so a CI system may rotate it.
    type: path
    env:
      - name: HUAWEICLOUD_SDK_ID_TOKEN_FILE
    vars:
      - name: modelarts_id_token_file
  oidc_provider_urn:
    description:
      - URN of the OIDC identity provider for STS v5 C(assume-with-oidc); needs O(oidc_agency_urn) and an id token
        (O(oidc_token_file) or O(oidc_id_token)). The temporary credentials are renewed before they expire.
    type: str
    env:
      - name: HUAWEICLOUD_OIDC_PROVIDER_URN
    vars:
      - name: modelarts_oidc_provider_urn
  oidc_agency_urn:
    description:
      - URN of the agency assumed with the OIDC id token.
    type: str
    env:
      - name: HUAWEICLOUD_OIDC_AGENCY_URN
    vars:
      - name: modelarts_oidc_agency_urn
  oidc_token_file:
    description:
      - File holding the OIDC id token; read again at every renewal.
    type: path
    env:
      - name: HUAWEICLOUD_OIDC_TOKEN_FILE
    vars:
      - name: modelarts_oidc_token_file
  oidc_id_token:
    description:
      - The OIDC id token itself; wins over O(oidc_token_file) given at the same level. Never logged nor shown.
    type: str
    env:
      - name: HUAWEICLOUD_OIDC_ID_TOKEN
    vars:
      - name: modelarts_oidc_id_token
  oidc_session_name:
    description:
      - Session name of the assumed agency (default C(oidc-sts-session)).
      - Only tunes the OIDC kind; it selects no credential kind (beside AK/SK it is ignored).
    type: str
    env:
      - name: HUAWEICLOUD_OIDC_SESSION_NAME
    vars:
      - name: modelarts_oidc_session_name
  oidc_duration_seconds:
    description:
      - Lifetime asked for the OIDC temporary credentials, 900 to 43200 seconds (default 3600).
      - Only tunes the OIDC kind; it selects no credential kind (beside AK/SK it is ignored).
    type: int
    env:
      - name: HUAWEICLOUD_OIDC_DURATION_SECONDS
    vars:
      - name: modelarts_oidc_duration_seconds
  agency_name:
    description:
      - An agency to assume on top of any credentials (IAM C(assume_role)); needs O(agency_domain_name).
      - The assumed credentials are renewed before they expire.
    type: str
    vars:
      - name: modelarts_agency_name
  agency_domain_name:
    description:
      - Name of the account that created O(agency_name).
    type: str
    vars:
      - name: modelarts_agency_domain_name
  agency_duration:
    description:
      - Lifetime asked for the agency's credentials, 900 to 86400 seconds (default 3600).
    type: int
    vars:
      - name: modelarts_agency_duration
  sts_endpoint:
    description:
      - STS endpoint URL for O(oidc_provider_urn). Defaults to C(https://sts.<region>.myhuaweicloud.com) for the regions
        of the official SDK's region map, and cn-north-4's for the others only when O(endpoint) and O(iam_endpoint) are
        not set; with either set, or without O(region), the id token is never sent to a derived host of another region, and
        O(sts_endpoint) must be set.
    type: str
    env:
      - name: HUAWEICLOUD_SDK_STS_ENDPOINT
    vars:
      - name: modelarts_sts_endpoint
  endpoint:
    description:
      - ModelArts endpoint URL. Defaults to C(https://modelarts.<region>.myhuaweicloud.com).
    type: str
    env:
      - name: HUAWEICLOUD_MODELARTS_ENDPOINT
    vars:
      - name: modelarts_endpoint
  iam_endpoint:
    description:
      - IAM endpoint URL. Defaults to C(https://iam.<region>.myhuaweicloud.com).
    type: str
    env:
      - name: HUAWEICLOUD_SDK_IAM_ENDPOINT
    vars:
      - name: modelarts_iam_endpoint
  validate_certs:
    description:
      - Whether to verify the TLS certificates of the endpoints. Only turn this off for testing.
    type: bool
    default: true
    env:
      - name: HUAWEICLOUD_VALIDATE_CERTS
    vars:
      - name: modelarts_validate_certs
  ca_bundle:
    description:
      - PEM file of the certificate authorities to trust. Wins over E(REQUESTS_CA_BUNDLE) and E(CURL_CA_BUNDLE).
    type: path
    env:
      - name: HUAWEICLOUD_CA_BUNDLE
    vars:
      - name: modelarts_ca_bundle
  proxy:
    description:
      - Proxy URL for all requests, E(NO_PROXY) hosts included. When not set, E(HTTPS_PROXY), E(HTTP_PROXY), E(ALL_PROXY) and
        E(NO_PROXY) are honoured.
      - Instance metadata and CCE pod identity are always reached directly, never through a proxy.
      - Percent-encode the reserved characters of the user name and password, for example C(http://user:pa%2Fss@proxy:3128).
    type: str
    vars:
      - name: modelarts_proxy
  connect_timeout:
    description:
      - Seconds to wait for a connection to be established.
    type: float
    default: 10
    vars:
      - name: modelarts_connect_timeout
  request_timeout:
    description:
      - Seconds to wait for a response once connected.
    type: float
    default: 30
    vars:
      - name: modelarts_request_timeout
  backoff_retries:
    description:
      - How many times a request is retried after HTTP 429, 500, 502, 503, 504, a connection error, a timeout or an unreadable answer.
    type: int
    default: 4
    vars:
      - name: modelarts_backoff_retries
  backoff_delay:
    description:
      - Base delay in seconds of the full-jitter exponential backoff; a C(Retry-After) header from the service is used instead when present.
    type: float
    default: 1
    vars:
      - name: modelarts_backoff_delay
  backoff_max_delay:
    description:
      - Upper bound in seconds of one backoff delay.
    type: float
    default: 30
    vars:
      - name: modelarts_backoff_max_delay
  max_response_bytes:
    description:
      - Largest response body accepted, in bytes. Job documents are kilobytes; the C(node_count_metrics) of a job that ran for
        weeks can reach a few MiB.
      - The pages of one search by name count together, as one answer.
    type: int
    default: 33554432
    vars:
      - name: modelarts_max_response_bytes
notes:
  - "Precedence, highest first: keywords, then C(modelarts_*) variables (rendered as templates), then environment variables.
    Each option takes the first value set; the credential kind comes from the first level that names any credential
    option (other kinds are ignored), and two kinds given at the same level conflict."
  - A boolean option given anything but a boolean fails, naming the option and where the value came from.
  - Credentials are checked before any request is sent; conflicting or incomplete credentials fail and name the options and
    environment variables involved.
  - "When no level names any credential option: the SDK credentials file, then CCE pod identity, then the ECS/BMS instance
    metadata (not looked at when E(HUAWEICLOUD_METADATA_DISABLED) is V(true)); see the module's notes. Obtained credentials
    are renewed before they expire."
  - Secrets never appear in results, error messages or logs.
requirements:
  - requests
  - jsonschema
"""
